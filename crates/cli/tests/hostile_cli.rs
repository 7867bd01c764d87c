//! Hostile invocations of the real binary (issue 11 §5): missing files, directories given
//! as files, `/dev/zero`, empty files, binary garbage, absurd numbers in flags, unknown and
//! conflicting flags, across every subcommand. Each must end with a documented exit code
//! (0 success, 2 invalid input, 3 a lossless drop when told to fail on one, 4 a PFC
//! deadlock), never with a panic or a signal, within a bounded time and address space.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A tiny scenario that finishes in well under a millisecond of simulated time.
const SMALL: &str = r#"
name = "small"
stop_time = "50us"
[topology]
kind = "star"
hosts = 3
rate = "100Gbps"
[[workload]]
kind = "incast"
senders = [1, 2]
receiver = 0
size = "8KiB"
"#;

/// A switch without traffic, for `burst` (which adds the bursts).
const BURST: &str = "name = \"b\"\nstop_time = \"200us\"\n\
                     [topology]\nkind = \"star\"\nhosts = 4\nrate = \"100Gbps\"\n";

/// Wall time after which an invocation counts as hung.
const TIMEOUT: Duration = Duration::from_secs(120);

/// Address space of every invocation (KiB for `ulimit -v`): an input read without a bound
/// fails here instead of exhausting the machine.
const ADDRESS_SPACE_KIB: u64 = 4 << 20;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Writes the inputs the invocations refer to into `d`.
fn inputs(d: &Path) {
    let w = |name: &str, bytes: &[u8]| std::fs::write(d.join(name), bytes).expect("write");
    w("s.toml", SMALL.as_bytes());
    w("b.toml", BURST.as_bytes());
    w("empty.toml", b"");
    w("empty.txt", b"");
    w("empty.json", b"");
    let garbage: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    w("garbage.bin", &garbage);
    w(
        "huge.toml",
        b"stop_time = \"20us\"\n[topology]\nkind = \"star\"\nhosts = 2000000000\nrate = \"100Gbps\"\n",
    );
    w(
        "fat.toml",
        b"stop_time = \"20us\"\n[topology]\nkind = \"fat-tree\"\nk = 1000000\nrate = \"100Gbps\"\n",
    );
    w(
        "a2a.toml",
        b"stop_time = \"20us\"\n[topology]\nkind = \"star\"\nhosts = 5000\nrate = \"100Gbps\"\n\
          [[workload]]\nkind = \"all-to-all\"\nsize = \"1KB\"\n",
    );
    let frame = SMALL.replace(
        "[[workload]]",
        "[host]\nheader = \"18446744073709551616B\"\n[[workload]]",
    );
    w("frame.toml", frame.as_bytes());
    w("file-not-dir", b"x");
    std::fs::create_dir(d.join("dir")).expect("mkdir");
    // An HPCC config that is valid except for its congestion control (HPCC-PINT).
    let hpcc = repo().join("examples/hpcc");
    let config = std::fs::read_to_string(hpcc.join("config.txt")).expect("config.txt");
    let absolute: Vec<String> = config
        .lines()
        .map(|l| match l.split_once(' ') {
            Some((k @ ("TOPOLOGY_FILE" | "FLOW_FILE"), f)) => {
                format!("{k} {}", hpcc.join(f).display())
            }
            Some(("CC_MODE", _)) => "CC_MODE 10".to_string(),
            _ => l.to_string(),
        })
        .collect();
    w("cc10.txt", absolute.join("\n").as_bytes());
    // A topology file for `workload`: two hosts on a switch.
    w(
        "topo.txt",
        b"3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n",
    );
    // SONiC inputs: the SN3700 example, and JSON that is valid but not a database.
    let sonic = common::example("sn3700");
    for (from, to) in [
        ("config_db.json", "cdb.json"),
        ("asic_table.json", "asic.json"),
    ] {
        std::fs::copy(sonic.join(from), d.join(to)).expect("copy");
    }
    w("null.json", b"null");
    w("array.json", b"[]");
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    w("deep.json", deep.as_bytes());
}

/// The invocations, as arguments separated by spaces, each with text its stderr must
/// contain, if any.
const CASES: &[(&str, Option<&str>)] = &[
        // run: the scenario file.
        ("run missing.toml", None),
        ("run dir", None),
        ("run /dev/zero", Some("larger than")),
        ("run empty.toml", None),
        ("run garbage.bin", None),
        ("run huge.toml --out o-huge", None),
        ("run fat.toml --out o-fat", None),
        ("run a2a.toml --out o-a2a", None),
        ("run frame.toml --out o-frame", Some("a data frame must be below")),
        // run: flags.
        ("run", None),
        ("run s.toml --no-such-flag", None),
        ("run s.toml --out o-ok --fail-on-lossless-drop --no-plots", None),
        ("run s.toml --hpcc-config cc10.txt", None),
        ("run s.toml --stop-time 0s", None),
        ("run s.toml --stop-time -1us", None),
        ("run s.toml --stop-time 1e30s --out o-long --no-plots", None),
        ("run s.toml --stop-time 18446744073709551616ps", None),
        ("run s.toml --threads 0", None),
        ("run s.toml --threads 99999999999", None),
        ("run s.toml --threads 65535 --out o-threads --no-plots", None),
        ("run s.toml --seed 18446744073709551616", None),
        ("run s.toml --seed -1", None),
        ("run s.toml --compat ns3", None),
        ("run s.toml --deadlock-detection 0s", None),
        ("run s.toml --out file-not-dir", None),
        ("run s.toml --out /dev/null/x", None),
        // run: HPCC configs.
        ("run --hpcc-config missing.txt", None),
        ("run --hpcc-config dir", None),
        ("run --hpcc-config garbage.bin", None),
        ("run --hpcc-config empty.txt", None),
        ("run --hpcc-config cc10.txt", Some("CC_MODE")),
        // compare.
        ("compare missing.toml", None),
        ("compare /dev/zero", None),
        ("compare s.toml --mmu xyz", None),
        ("compare s.toml --mmu=", None),
        ("compare s.toml --shp-ratio -1", None),
        ("compare s.toml --shp-ratio NaN", None),
        ("compare s.toml --dsh-delta 18446744073709551615 --out o-cmp --no-plots -q", None),
        // burst.
        ("burst garbage.bin", None),
        ("burst b.toml --fan-in 0", None),
        ("burst b.toml --fan-in 1000000000 --out o-fan", None),
        ("burst b.toml --receivers 0,99999999", None),
        ("burst b.toml --receivers 99999999 --out o-recv", None),
        ("burst b.toml --at 1e30s --out o-at", None),
        ("burst b.toml --prio 8", None),
        ("burst b.toml --resolution 0", None),
        ("burst b.toml --mmu sih,sih", None),
        ("burst b.toml --fan-in 2 --at 199us --resolution 0.5 --out o-burst -q", None),
        ("burst b.toml --dsh-delta 18446744073709551615 --fan-in 2 --out o-delta -q", None),
        // plan-buffer.
        ("plan-buffer --ports 0", None),
        ("plan-buffer --ports 65535 --speed 1.6Tbps --cable-m 1e308", None),
        ("plan-buffer --speed 0bps", None),
        ("plan-buffer --speed -100Gbps", None),
        ("plan-buffer --buffer 999999999TB", None),
        ("plan-buffer --buffer 18446744073709551615B --private 18446744073709551615B --json", None),
        ("plan-buffer --cell 0B", None),
        ("plan-buffer --alpha inf", None),
        ("plan-buffer --cable-m 10 --delay-ns 5", None),
        ("plan-buffer --mtu 18446744073709551615", None),
        ("plan-buffer --formula magic", None),
        // workload.
        ("workload --topology missing.txt", None),
        ("workload --topology dir", None),
        ("workload --topology garbage.bin", None),
        ("workload --topology topo.txt --load 0", None),
        ("workload --topology topo.txt --load 2", None),
        ("workload --topology topo.txt --duration 1e30s", None),
        ("workload --topology topo.txt --start 18446744073709551615ps --duration 1us", None),
        ("workload --topology topo.txt --cdf nosuch", None),
        ("workload --topology topo.txt --cdf /dev/zero", None),
        ("workload --topology topo.txt --cdf garbage.bin", None),
        ("workload --topology topo.txt --host-rate 0bps", None),
        ("workload --topology topo.txt --prio 8", None),
        ("workload --topology topo.txt --duration 10us --output dir", None),
        // bench with bad HPCC configs (it refuses them before running anything).
        ("bench --hpcc-config missing.txt", None),
        ("bench --hpcc-config dir", None),
        ("bench --hpcc-config /dev/zero", None),
        ("bench --hpcc-config empty.txt", None),
        ("bench --hpcc-config garbage.bin", None),
        ("bench --hpcc-config cc10.txt", None),
        ("bench --threads 0", None),
        ("bench --credit-grant static", Some("--flow-control credit")),
        ("bench --flow-control credit --credit-grant none", None),
        ("bench --scenario missing.toml", Some("missing.toml")),
        ("bench --scenario garbage.bin", None),
        ("bench --scenario /dev/zero", None),
        ("bench --scenario empty.txt --cc hpcc", Some("--cc")),
        // sonic plan / show / diff / config.
        ("sonic plan --config-db missing.json", None),
        ("sonic plan --config-db dir", None),
        ("sonic plan --config-db /dev/zero", Some("larger than")),
        ("sonic plan --config-db empty.json", None),
        ("sonic plan --config-db garbage.bin", None),
        ("sonic plan --config-db deep.json", None),
        ("sonic plan --config-db null.json", None),
        ("sonic plan --config-db cdb.json --asic-table garbage.bin", None),
        ("sonic plan --config-db cdb.json --asic-table asic.json --state-db array.json", None),
        ("sonic plan --config-db cdb.json --model nosuch", None),
        ("sonic plan --config-db cdb.json --asic-table asic.json --out file-not-dir", None),
        ("sonic show buffer information --config-db array.json", None),
        ("sonic show buffer configuration --config-db /dev/zero", Some("larger than")),
        ("sonic show buffer information --redis redis://127.0.0.1:1", None),
        ("sonic diff --config-db cdb.json --asic-table asic.json --config-db-new garbage.bin", None),
        ("sonic diff --config-db cdb.json --asic-table asic.json --config-db-new dir", None),
        ("sonic diff --config-db cdb.json --asic-table /dev/zero --config-db-new cdb.json", Some("larger than")),
        ("sonic config --config-db garbage.bin interface cable-length Ethernet0 40m", None),
        ("sonic config --config-db cdb.json interface cable-length Ethernet0 99999999999999999999m", None),
        ("sonic config --config-db cdb.json interface cable-length NoSuchPort -5m", None),
        ("sonic config --config-db cdb.json buffer shared-headroom-pool size 18446744073709551616", None),
        ("sonic config --config-db cdb.json buffer shared-headroom-pool over-subscribe-ratio NaN", None),
        ("sonic config --config-db cdb.json --redis redis://127.0.0.1:1 buffer shared-headroom-pool size 0", None),
        ("sonic nosuch", None),
        ("nosuch", None),
];

/// Runs `headroom <args>` in `dir` under the address-space limit, killing it after
/// [`TIMEOUT`]: its exit code (`None` if a signal ended it), stderr, and whether it hung.
fn run_bounded(args: &[&str], dir: &Path) -> (Option<i32>, String, bool) {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v {ADDRESS_SPACE_KIB} && exec \"$0\" \"$@\""
        ))
        .arg(env!("CARGO_BIN_EXE_headroom"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sh runs");
    // Read stderr on a thread: a child blocked on a full pipe would look hung.
    let mut pipe = child.stderr.take().expect("piped stderr");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut pipe, &mut text);
        text
    });
    let start = Instant::now();
    let (status, hung) = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break (status, false);
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            break (child.wait().expect("wait after kill"), true);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stderr = reader.join().unwrap_or_default();
    (status.code(), stderr, hung)
}

#[test]
fn hostile_invocations_end_with_a_documented_code() {
    let dir = tempfile::tempdir().expect("tempdir");
    inputs(dir.path());
    assert!(CASES.len() >= 40, "{} cases", CASES.len());
    let mut failures = Vec::new();
    for (line, expect) in CASES {
        let args: Vec<&str> = line.split_whitespace().collect();
        let (code, stderr, hung) = run_bounded(&args, dir.path());
        let mut wrong = Vec::new();
        if hung {
            wrong.push(format!("still running after {TIMEOUT:?}"));
        }
        match code {
            Some(0 | 2 | 3 | 4) => {}
            Some(other) => wrong.push(format!("exit code {other}")),
            None => wrong.push("killed by a signal".to_string()),
        }
        for bad in ["panicked", "RUST_BACKTRACE"] {
            if stderr.contains(bad) {
                wrong.push(format!("stderr has {bad:?}"));
            }
        }
        if let Some(e) = expect {
            if !stderr.contains(e) {
                wrong.push(format!("stderr lacks {e:?}"));
            }
        }
        if !wrong.is_empty() {
            failures.push(format!(
                "headroom {line}: {}\n{}",
                wrong.join(", "),
                stderr.trim_end()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} invocations misbehaved:\n\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n\n")
    );
}
