//! Runs a sweep's points on this machine: `jobs` at a time, each a child process
//! (`headroom sweep task`) on one thread with its output in `logs/<id>.log`, so that one
//! point's crash is that point's failure only.
//!
//! Invariants: every point given is started exactly once; a point whose process failed
//! without saying why gets a `logs/<id>.failed` naming its exit status.

use super::{Layout, Manifest};
use indicatif::{ProgressBar, ProgressStyle};
use miette::{miette, IntoDiagnostic, Result, WrapErr};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Runs the points `todo` (indices into `manifest.points`); a point that fails is that
/// point's failure (its `.failed` file says why), not an error of the sweep.
pub fn run_points(
    layout: &Layout,
    manifest: &Manifest,
    todo: &[usize],
    jobs: usize,
    quiet: bool,
) -> Result<()> {
    if todo.is_empty() {
        return Ok(());
    }
    let exe = std::env::current_exe()
        .into_diagnostic()
        .wrap_err("finding the headroom binary to run the points with")?;
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(todo.len() as u64)
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} points {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let next = AtomicUsize::new(0);
    let failed = AtomicUsize::new(0);
    let first_error: Mutex<Option<miette::Report>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(todo.len()) {
            scope.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&index) = todo.get(k) else {
                    return;
                };
                let id = &manifest.points[index].id;
                match run_one(layout, &exe, index, id) {
                    Ok(true) => {}
                    Ok(false) => {
                        let n = failed.fetch_add(1, Ordering::Relaxed) + 1;
                        bar.set_message(format!("({n} failed)"));
                    }
                    Err(e) => {
                        // Not the point's fault (a log that cannot be written): stop
                        // handing out points.
                        next.store(todo.len(), Ordering::Relaxed);
                        if let Ok(mut slot) = first_error.lock() {
                            slot.get_or_insert(e);
                        }
                    }
                }
                bar.inc(1);
            });
        }
    });
    bar.finish_and_clear();
    if let Some(e) = first_error.into_inner().ok().flatten() {
        return Err(e);
    }
    Ok(())
}

/// Runs point `index` in a child process; whether it finished.
fn run_one(layout: &Layout, exe: &std::path::Path, index: usize, id: &str) -> Result<bool> {
    let log_path = layout.log(id);
    let log = std::fs::File::create(&log_path)
        .into_diagnostic()
        .wrap_err_with(|| format!("creating {}", log_path.display()))?;
    let err_log = log
        .try_clone()
        .into_diagnostic()
        .wrap_err_with(|| format!("opening {} twice", log_path.display()))?;
    let status = Command::new(exe)
        .args(["sweep", "task"])
        .arg(&layout.dir)
        .arg(index.to_string())
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(err_log)
        .status()
        .map_err(|e| miette!("starting {} for point {id}: {e}", exe.display()))?;
    if status.success() && layout.is_done(id) {
        return Ok(true);
    }
    if !layout.failed(id).exists() {
        let _ = std::fs::write(
            layout.failed(id),
            format!("the run's process ended with {status} (see the log)\n"),
        );
    }
    Ok(false)
}
