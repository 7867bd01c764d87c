//! `headroom sweep task DIR INDEX`: runs one point of an expanded sweep (on one thread, or
//! on a Slurm task's CPUs), what each local worker and each Slurm array task does.
//!
//! Invariants: the point's outputs appear in `runs/<id>` all at once (written in a hidden
//! directory, renamed into place), with a copy of the scenario they came from; a failure
//! leaves `logs/<id>.failed` with the reason and no `runs/<id>`.

use super::{write_atomic, Layout};
use clap::Args;
use miette::{miette, IntoDiagnostic, Result, WrapErr};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Arguments of `headroom sweep task`.
#[derive(Args, Debug)]
pub struct TaskArgs {
    /// The sweep's output directory.
    dir: PathBuf,
    /// The point's index.
    index: usize,
}

/// Runs the task, recording a failure in `logs/<id>.failed`.
pub fn run(a: TaskArgs) -> Result<ExitCode> {
    let layout = Layout { dir: a.dir };
    let manifest = layout.read_manifest()?;
    let point = manifest.points.get(a.index).ok_or_else(|| {
        miette!(
            "{}: the sweep has {} points; there is no point {}",
            layout.dir.display(),
            manifest.points.len(),
            a.index
        )
    })?;
    let id = point.id.clone();
    let result = run_point(&layout, &id);
    match &result {
        Ok(()) => {
            let _ = std::fs::remove_file(layout.failed(&id));
        }
        Err(report) => {
            // The report is also printed (to the log) by main.
            let _ = std::fs::write(layout.failed(&id), format!("{report}\n"));
        }
    }
    result.map(|()| ExitCode::SUCCESS)
}

fn run_point(layout: &Layout, id: &str) -> Result<()> {
    let scenario = layout.scenario(id);
    let tmp = layout.run_tmp(id);
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp)
            .into_diagnostic()
            .wrap_err_with(|| format!("removing {}", tmp.display()))?;
    }
    let text = std::fs::read(&scenario)
        .into_diagnostic()
        .wrap_err_with(|| format!("reading {}", scenario.display()))?;
    let started = Instant::now();
    // One thread, as the local workers run side by side; a Slurm task as many as the CPUs
    // it was given (`[slurm] cpus_per_task`). Results do not depend on it.
    let threads = std::env::var("SLURM_CPUS_PER_TASK")
        .ok()
        .and_then(|n| n.trim().parse::<u16>().ok())
        .unwrap_or(1);
    let code = crate::run::run(crate::run::RunArgs::sweep_point(
        scenario,
        tmp.clone(),
        threads,
    ))?;
    let wall = started.elapsed().as_secs_f64();
    if !tmp.join("summary.json").is_file() {
        return Err(miette!(
            "the run ended ({code:?}) without writing {}",
            tmp.join("summary.json").display()
        ));
    }
    write_atomic(&tmp.join("scenario.toml"), &text)?;
    let env = |k: &str| std::env::var(k).ok();
    let info = serde_json::json!({
        "wall_s": wall,
        // The process ran this one point: its peak is the point's.
        "max_rss_bytes": crate::memory::peak_rss(),
        "host": std::fs::read_to_string("/etc/hostname").ok().map(|h| h.trim().to_string()),
        "slurm_job": env("SLURM_ARRAY_JOB_ID"),
        "slurm_task": env("SLURM_ARRAY_TASK_ID"),
    });
    write_atomic(
        &tmp.join("task.json"),
        serde_json::to_string_pretty(&info)
            .into_diagnostic()?
            .as_bytes(),
    )?;
    let dest = layout.run(id);
    if dest.exists() {
        std::fs::remove_dir_all(&dest)
            .into_diagnostic()
            .wrap_err_with(|| format!("removing {}", dest.display()))?;
    }
    std::fs::rename(&tmp, &dest)
        .into_diagnostic()
        .wrap_err_with(|| format!("moving {} to {}", tmp.display(), dest.display()))
}
