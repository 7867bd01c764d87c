//! Standard output and standard error of the subcommands.
//!
//! Every line the CLI prints goes through `outln!`, `out!` or `errln!` (below) instead of
//! `println!`/`eprintln!`, which panic when the stream is gone.
//!
//! Invariants:
//! - A reader that goes away (`headroom workload ... | head`) ends the process at once,
//!   quietly, with exit code 0: the consumer has what it wanted. Files a subcommand writes
//!   are complete before it prints, so nothing on disk is cut short.
//! - Any other failure to write standard output (a full disk behind `>`) is reported on
//!   standard error and exits with code 2, the code of every other error.
//! - Writing to standard error never fails the process: a diagnostic nobody can read is
//!   dropped.

use std::fmt;
use std::io::{self, Write};

/// Writes `args` to standard output; see the module's invariants for failures.
pub fn write_stdout(args: fmt::Arguments<'_>) {
    let mut stdout = io::stdout().lock();
    if let Err(e) = stdout.write_fmt(args) {
        stdout_failed(&e);
    }
}

/// Flushes standard output; a subcommand calls it after its last line so a failure of the
/// final write is reported as [`write_stdout`] reports it.
pub fn flush_stdout() {
    if let Err(e) = io::stdout().lock().flush() {
        stdout_failed(&e);
    }
}

fn stdout_failed(e: &io::Error) -> ! {
    if e.kind() == io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    write_stderr(format_args!("error: writing to standard output: {e}\n"));
    std::process::exit(2);
}

/// Writes `args` to standard error, ignoring failures (see the module's invariants).
pub fn write_stderr(args: fmt::Arguments<'_>) {
    let _ = io::stderr().lock().write_fmt(args);
}

/// `println!` that ends quietly when standard output is closed.
macro_rules! outln {
    () => {
        $crate::console::write_stdout(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::console::write_stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` that ends quietly when standard output is closed.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::console::write_stdout(format_args!($($arg)*))
    };
}

/// `eprintln!` that never panics.
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::console::write_stderr(format_args!("{}\n", format_args!($($arg)*)))
    };
}
