//! A sweep on Slurm: one job array, one task per point, each running
//! `headroom sweep task DIR INDEX` on one CPU, with the resources of `[slurm]`.
//!
//! `slurm/sweep.sbatch` is the job script (readable, and submittable by hand); every
//! submission is recorded in `slurm/jobs.json` (job id, index offset, points), which is how
//! a collection asks `squeue` which points are still queued or running. Array indices are
//! offsets from a submission's first point, in submissions of at most
//! [`MAX_ARRAY_SPAN`] indices, so that sweeps larger than Slurm's default `MaxArraySize`
//! (1001) still submit.
//!
//! Invariants: a point is submitted only when it is not done and not queued or running;
//! a submission is recorded only when `sbatch` accepted it.

use super::{spec::Sweep, write_atomic, Layout, Manifest};
use miette::{miette, IntoDiagnostic, Result, WrapErr};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// Largest array index of one submission, plus one (Slurm's default `MaxArraySize` is
/// 1001: indices 0 to 1000).
pub const MAX_ARRAY_SPAN: usize = 1000;

/// Largest `jobs.json` read.
const MAX_JOBS_BYTES: u64 = 64 << 20;

/// One accepted submission.
#[derive(Debug, Serialize, Deserialize)]
struct Submission {
    /// Slurm's job id of the array.
    job: String,
    /// The point index of array index 0.
    offset: usize,
    /// Ids of the points submitted.
    points: Vec<String>,
}

fn jobs_file(layout: &Layout) -> PathBuf {
    layout.slurm_dir().join("jobs.json")
}

fn script_file(layout: &Layout) -> PathBuf {
    layout.slurm_dir().join("sweep.sbatch")
}

fn read_jobs(layout: &Layout) -> Result<Vec<Submission>> {
    let path = jobs_file(layout);
    if !path.exists() {
        return Ok(Vec::new());
    }
    let text = headroom_sim::input::read_text(&path, MAX_JOBS_BYTES)
        .map_err(|e| miette!("{}: cannot read: {e}", path.display()))?;
    serde_json::from_str(&text)
        .into_diagnostic()
        .wrap_err_with(|| format!("{}: not a list of submissions", path.display()))
}

/// Quotes `s` for a POSIX shell.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Writes `slurm/sweep.sbatch` for `sweep` into `layout`; returns its path.
pub fn write_script(sweep: &Sweep, layout: &Layout) -> Result<PathBuf> {
    let s = &sweep.slurm;
    let exe = match &s.headroom {
        Some(p) => p.clone(),
        None => std::env::current_exe()
            .into_diagnostic()
            .wrap_err("finding the headroom binary for the job script")?,
    };
    let exe = std::path::absolute(&exe).unwrap_or(exe);
    let dir = std::path::absolute(&layout.dir).unwrap_or_else(|_| layout.dir.clone());
    let mut lines = vec![
        "#!/bin/bash".to_string(),
        format!("# headroom sweep {}: one array task per point.", sweep.name),
        "# Submitted by `headroom sweep --slurm` with --array and HEADROOM_SWEEP_OFFSET (the"
            .into(),
        "# index of array task 0); `headroom sweep collect` gathers the results.".into(),
        format!("#SBATCH --job-name=headroom-{}", sweep.name),
        format!(
            "#SBATCH --output={}",
            dir.join("logs").join("slurm-%A_%a.out").display()
        ),
        "#SBATCH --ntasks=1".into(),
        format!("#SBATCH --cpus-per-task={}", s.cpus_per_task),
    ];
    for (flag, value) in [
        ("partition", &s.partition),
        ("time", &s.time),
        ("mem", &s.mem),
        ("account", &s.account),
    ] {
        if let Some(v) = value {
            lines.push(format!("#SBATCH --{flag}={v}"));
        }
    }
    for o in &s.options {
        lines.push(format!("#SBATCH {o}"));
    }
    let width = sweep.id_width();
    lines.extend([
        "set -u".to_string(),
        "index=$(( ${HEADROOM_SWEEP_OFFSET:-0} + SLURM_ARRAY_TASK_ID ))".into(),
        format!("printf -v id '%0{width}d' \"$index\""),
        format!(
            "exec {} sweep task {} \"$index\" > {}/logs/\"$id\".log 2>&1",
            shell_quote(&exe.display().to_string()),
            shell_quote(&dir.display().to_string()),
            shell_quote(&dir.display().to_string()),
        ),
    ]);
    std::fs::create_dir_all(layout.slurm_dir())
        .into_diagnostic()
        .wrap_err_with(|| format!("creating {}", layout.slurm_dir().display()))?;
    let path = script_file(layout);
    write_atomic(&path, (lines.join("\n") + "\n").as_bytes())?;
    Ok(path)
}

/// `--array` ranges of sorted indices: `0-3,7,9-10`.
fn array_ranges(indices: &[usize]) -> String {
    let mut out = Vec::new();
    let mut i = 0;
    while i < indices.len() {
        let start = indices[i];
        let mut end = start;
        while i + 1 < indices.len() && indices[i + 1] == end + 1 {
            i += 1;
            end = indices[i];
        }
        out.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    out.join(",")
}

/// Submits the points `todo` (indices into `manifest.points`) that are not queued or
/// running, in arrays of at most [`MAX_ARRAY_SPAN`] indices.
pub fn submit_unfinished(
    layout: &Layout,
    manifest: &Manifest,
    todo: &[usize],
    quiet: bool,
) -> Result<ExitCode> {
    let queue = Queue::query(layout)?;
    let todo: Vec<usize> = todo
        .iter()
        .copied()
        .filter(|&i| !queue.holds(&manifest.points[i].id))
        .collect();
    if todo.is_empty() {
        outln!("nothing to submit: every point is finished, queued or running");
        return Ok(ExitCode::SUCCESS);
    }
    let script = script_file(layout);
    if !script.is_file() {
        return Err(miette!(
            "{}: no job script; run `headroom sweep FILE --slurm` first",
            script.display()
        ));
    }
    let mut jobs = read_jobs(layout)?;
    let mut start = 0;
    while start < todo.len() {
        let offset = todo[start];
        let mut end = start;
        while end < todo.len() && todo[end] - offset < MAX_ARRAY_SPAN {
            end += 1;
        }
        let chunk = &todo[start..end];
        let relative: Vec<usize> = chunk.iter().map(|i| i - offset).collect();
        let mut array = array_ranges(&relative);
        if let Some(n) = manifest.max_running {
            array.push_str(&format!("%{n}"));
        }
        let job = sbatch(&script, &array, offset)?;
        for &i in chunk {
            let _ = std::fs::remove_file(layout.failed(&manifest.points[i].id));
        }
        if !quiet {
            outln!(
                "submitted job {job}: {} points (array {array}, offset {offset})",
                chunk.len()
            );
        }
        jobs.push(Submission {
            job,
            offset,
            points: chunk
                .iter()
                .map(|&i| manifest.points[i].id.clone())
                .collect(),
        });
        let json = serde_json::to_vec_pretty(&jobs).into_diagnostic()?;
        write_atomic(&jobs_file(layout), &json)?;
        start = end;
    }
    if !quiet {
        outln!(
            "collect with: headroom sweep collect {}",
            layout.dir.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs `sbatch --parsable`; returns the job id.
fn sbatch(script: &Path, array: &str, offset: usize) -> Result<String> {
    let out = Command::new("sbatch")
        .arg("--parsable")
        .arg(format!("--array={array}"))
        .arg(format!("--export=ALL,HEADROOM_SWEEP_OFFSET={offset}"))
        .arg(script)
        .output()
        .map_err(|e| miette!("running sbatch: {e} (is Slurm's sbatch on the PATH?)"))?;
    if !out.status.success() {
        return Err(miette!(
            "sbatch --array={array} {} failed ({}): {}",
            script.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    // `--parsable` prints `jobid` or `jobid;cluster`.
    let text = String::from_utf8_lossy(&out.stdout);
    let job = text.trim().split(';').next().unwrap_or("").to_string();
    if job.is_empty() || !job.bytes().all(|b| b.is_ascii_digit()) {
        return Err(miette!("sbatch printed `{}`, not a job id", text.trim()));
    }
    Ok(job)
}

/// The points of a sweep that Slurm still holds (pending or running).
#[derive(Debug, Default)]
pub struct Queue {
    ids: BTreeSet<String>,
}

impl Queue {
    /// Whether point `id` is queued or running.
    pub fn holds(&self, id: &str) -> bool {
        self.ids.contains(id)
    }

    /// Asks `squeue` about the sweep's recorded submissions (none recorded: nothing held).
    pub fn query(layout: &Layout) -> Result<Queue> {
        let jobs = read_jobs(layout)?;
        if jobs.is_empty() {
            return Ok(Queue::default());
        }
        let out = Command::new("squeue")
            .args(["--me", "--noheader", "--array", "--format=%F %K %T"])
            .output()
            .map_err(|e| miette!("running squeue: {e} (is Slurm's squeue on the PATH?)"))?;
        if !out.status.success() {
            return Err(miette!(
                "squeue failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let mut ids = BTreeSet::new();
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let mut f = line.split_whitespace();
            let (Some(job), Some(tasks)) = (f.next(), f.next()) else {
                continue;
            };
            let Some(sub) = jobs.iter().find(|s| s.job == job) else {
                continue;
            };
            // A pending array shows its unstarted tasks as ranges (`3-7%2`, `1,4`).
            let tasks = tasks.split('%').next().unwrap_or("");
            for part in tasks.trim_matches(['[', ']']).split(',') {
                let (a, b) = part.split_once('-').unwrap_or((part, part));
                let (Ok(a), Ok(b)) = (a.parse::<usize>(), b.parse::<usize>()) else {
                    continue;
                };
                for rel in a..=b.min(a + MAX_ARRAY_SPAN) {
                    let index = sub.offset + rel;
                    if let Some(id) = sub
                        .points
                        .iter()
                        .find(|id| id.parse::<usize>() == Ok(index))
                    {
                        ids.insert(id.clone());
                    }
                }
            }
        }
        Ok(Queue { ids })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_ranges_join_runs() {
        assert_eq!(array_ranges(&[0, 1, 2, 3, 7, 9, 10]), "0-3,7,9-10");
        assert_eq!(array_ranges(&[5]), "5");
        assert_eq!(array_ranges(&[]), "");
    }

    #[test]
    fn shell_quote_survives_quotes() {
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
