//! `headroom sweep --slurm` against a real single-node Slurm (munged, slurmctld and slurmd
//! started by `scripts/slurm-local.sh` in a temporary directory; `.ci/run` installs them):
//! the points run as a job array, a task that fails is listed by `sweep collect` with its
//! log and exit code 5, `collect --resubmit` submits that point alone, and once it has run
//! the table has every point.
//!
//! Without Slurm on the machine the test says so and passes, except under CI (`CI` set),
//! where a missing Slurm is a failure.

mod common;

use common::{stderr, stdout};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/slurm-local.sh")
}

/// Stops the cluster when the test ends, however it ends.
struct Cluster {
    dir: PathBuf,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(script())
            .arg("stop")
            .arg(&self.dir)
            .status();
    }
}

fn slurm_available() -> bool {
    ["slurmctld", "slurmd", "sbatch", "munged"].iter().all(|t| {
        Command::new("sh")
            .args(["-c", &format!("command -v {t} || test -x /usr/sbin/{t}")])
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

fn with_conf(args: &[&str], dir: &Path, conf: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("SLURM_CONF", conf)
        .output()
        .expect("the binary runs")
}

/// Collects until no point is queued or running (at most two minutes).
fn collect_when_idle(dir: &Path, conf: &Path, extra: &[&str]) -> Output {
    let started = Instant::now();
    let mut args = vec!["sweep", "collect", "out", "--no-plots"];
    args.extend_from_slice(extra);
    let mut o = with_conf(&args, dir, conf);
    while stdout(&o).contains(" queued or running") && !stdout(&o).contains(" 0 queued or running")
    {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "tasks still queued after two minutes: {}",
            stdout(&o)
        );
        std::thread::sleep(Duration::from_millis(500));
        o = with_conf(&["sweep", "collect", "out", "--no-plots"], dir, conf);
    }
    o
}

#[test]
fn a_sweep_runs_as_a_job_array_and_a_failed_task_is_resubmitted_alone() {
    if !slurm_available() {
        assert!(
            std::env::var_os("CI").is_none(),
            "Slurm (munge, slurmctld, slurmd, slurm-client) is not installed; .ci/run installs it"
        );
        eprintln!("skipped: Slurm is not installed on this machine");
        return;
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    let d = tmp.path();
    let cluster = Cluster {
        dir: d.join("slurm"),
    };
    let started = Command::new("bash")
        .arg(script())
        .arg("start")
        .arg(&cluster.dir)
        .output()
        .expect("the script runs");
    assert!(
        started.status.success(),
        "single-node Slurm did not start: {}{}",
        stdout(&started),
        stderr(&started)
    );
    let conf = cluster.dir.join("slurm.conf");

    std::fs::write(
        d.join("base.toml"),
        "[topology]\nkind = \"star\"\nhosts = 4\nrate = \"100Gbps\"\n\n\
         [[workload]]\nkind = \"incast\"\nsender_count = 2\nreceiver = 0\nsize = \"32KiB\"\n",
    )
    .expect("base");
    // The tasks run this wrapper: point 0001 fails the first time it runs.
    let wrapper = d.join("headroom-wrapper.sh");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\n\
             if [ \"$4\" = 1 ] && [ ! -e '{marker}' ]; then\n  touch '{marker}'\n  \
             echo 'injected failure of point 1'\n  exit 7\nfi\n\
             exec '{bin}' \"$@\"\n",
            marker = d.join("failed-once").display(),
            bin = env!("CARGO_BIN_EXE_headroom"),
        ),
    )
    .expect("wrapper");
    let chmod = Command::new("chmod")
        .arg("+x")
        .arg(&wrapper)
        .status()
        .expect("chmod");
    assert!(chmod.success());
    std::fs::write(
        d.join("sweep.toml"),
        "scenario = \"base.toml\"\nname = \"slurm-test\"\n\
         [[axis]]\nkey = \"workload[0].sender_count\"\nvalues = [1, 2, 3]\n\
         [slurm]\ntime = \"00:05:00\"\nmax_running = 2\nheadroom = \"headroom-wrapper.sh\"\n",
    )
    .expect("sweep");

    let o = with_conf(
        &["sweep", "sweep.toml", "--out", "out", "--slurm"],
        d,
        &conf,
    );
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("submitted job "), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("(array 0-2%2, offset 0)"),
        "{}",
        stdout(&o)
    );
    let script_text =
        std::fs::read_to_string(d.join("out/slurm/sweep.sbatch")).expect("job script");
    assert!(
        script_text.contains("#SBATCH --time=00:05:00"),
        "{script_text}"
    );

    let o = collect_when_idle(d, &conf, &[]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(5), "{out}{}", stderr(&o));
    assert!(out.contains("points: 2 done, 1 failed, 0 queued"), "{out}");
    assert!(
        out.contains("failed 0001 (workload[0].sender_count = 2)"),
        "{out}"
    );
    let log = std::fs::read_to_string(d.join("out/logs/0001.log")).expect("log of 0001");
    assert!(log.contains("injected failure of point 1"), "{log}");
    let ran: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(d.join("out/runs/0002/task.json")).expect("task.json"),
    )
    .expect("json");
    assert!(ran["slurm_job"].is_string(), "{ran}");

    let o = with_conf(
        &["sweep", "collect", "out", "--resubmit", "--no-plots"],
        d,
        &conf,
    );
    assert!(
        stdout(&o).contains(": 1 points (array 0%2, offset 1)"),
        "{}",
        stdout(&o)
    );
    let o = collect_when_idle(d, &conf, &[]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains("points: 3 done, 0 failed, 0 queued"),
        "{}",
        stdout(&o)
    );
    let csv = std::fs::read_to_string(d.join("out/results.csv")).expect("csv");
    assert_eq!(csv.lines().count(), 4, "{csv}");
    let jobs = std::fs::read_to_string(d.join("out/slurm/jobs.json")).expect("jobs");
    let jobs: serde_json::Value = serde_json::from_str(&jobs).expect("json");
    assert_eq!(jobs.as_array().map(Vec::len), Some(2), "{jobs}");
    drop(cluster);
}
