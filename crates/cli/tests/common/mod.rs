//! Helpers every test of the `headroom` binary shares: running it, reading its output, and
//! finding the shipped SONiC examples.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The directory of a shipped SONiC example (`sn3700`, `sn5600`).
pub fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/sonic")
        .join(name)
}

/// Runs `headroom <args>` in `dir`.
pub fn headroom(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("the binary runs")
}

/// stdout as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// stderr as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
