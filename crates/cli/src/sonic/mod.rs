//! `headroom sonic`: SONiC's dynamic buffer calculation on files.
//!
//! Subcommands (sonic-buffer.md; seed 003's CLI section):
//! - `plan`: the steady-state APPL_DB buffermgrd would write for a `config_db.json` and the
//!   ASIC's `asic_table.json` (`appl_db.json`, `state_db.json` in `--out`), plus the human view
//!   of `show buffer information`, the PG map, the pool accounting and, with `--model dsh`, the
//!   DSH plan;
//! - `diff`: what a CONFIG_DB change would change in APPL_DB (profiles, PG map, pool sizes);
//! - `show buffer configuration|information`: SONiC's two `show buffer` views;
//! - `config ...`: SONiC's buffer configuration commands on a `config_db.json` file or a
//!   switch's CONFIG_DB (validated with seed 003's rules, written atomically, untouched on
//!   error).
//!
//! Data come from files ([`input::Source::File`]) or, with `--redis URL`, from a switch's Redis
//! ([`input::Source::Redis`], [`redis`]): CONFIG_DB (db 4), STATE_DB (db 6) and, for
//! `show buffer information`, what is deployed (STATE_DB mirrors, APPL_DB db 0). Both backends
//! feed the same dumps to the same parsing, validation and rendering code; only reading and
//! writing differ.
//!
//! Every error is one line on stderr (`error: …`) and exit code 2, as for `headroom run`.

mod bufmgrd;
mod config_cmd;
mod diff;
mod input;
mod output;
mod plan;
mod redis;
mod show;

use std::fmt;
use std::process::ExitCode;

use clap::{Args, Subcommand, ValueEnum};
use headroom_sonic::model::{Dsh, Generic, Mellanox, Model};

/// Arguments of `headroom sonic`.
#[derive(Args, Debug)]
#[command(
    after_help = "Exit codes: 0 success, 2 invalid input or a rejected `config` change \
(the file is then left untouched)."
)]
pub struct SonicArgs {
    #[command(subcommand)]
    command: SonicCommand,
}

#[derive(Subcommand, Debug)]
enum SonicCommand {
    /// Compute the APPL_DB/STATE_DB buffermgrd would write and print SONiC's buffer views.
    Plan(plan::PlanArgs),
    /// Show what a CONFIG_DB change would change in APPL_DB (profiles, PG map, pool sizes).
    Diff(diff::DiffArgs),
    /// SONiC's `show buffer configuration|information` (files or a switch's Redis).
    Show(show::ShowArgs),
    /// SONiC's buffer `config` commands, editing a config_db.json file or CONFIG_DB in Redis.
    Config(config_cmd::ConfigArgs),
    /// Run the buffer manager daemon on a SONiC Redis (buffermgrd's replacement).
    Bufmgrd(bufmgrd::BufmgrdArgs),
}

/// The headroom model used to compute dynamic lossless profiles.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum ModelName {
    /// Bit-compatible with SONiC's Mellanox plugin (what a switch computes).
    #[default]
    Mellanox,
    /// The design document's well-known formula (seed 003).
    Generic,
    /// Dynamic and Shared Headroom: insurance headroom per port, thresholds.
    Dsh,
}

impl ModelName {
    /// The headroom model.
    pub fn model(self) -> Model {
        match self {
            ModelName::Mellanox => Model::Mellanox(Mellanox),
            ModelName::Generic => Model::Generic(Generic),
            ModelName::Dsh => Model::Dsh(Dsh::default()),
        }
    }

    /// The name as given on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            ModelName::Mellanox => "mellanox",
            ModelName::Generic => "generic",
            ModelName::Dsh => "dsh",
        }
    }
}

/// A `headroom sonic` error: one line (or, for several table errors, one line per error)
/// printed as `error: …`; the process exits with code 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SonicError(String);

impl SonicError {
    /// An error with this message.
    pub fn new(msg: impl Into<String>) -> SonicError {
        SonicError(msg.into())
    }
}

impl fmt::Display for SonicError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SonicError {}

/// Result of the `sonic` subcommands.
pub type Result<T> = std::result::Result<T, SonicError>;

/// `Err(SonicError)` with a formatted message.
macro_rules! fail {
    ($($t:tt)*) => {
        return Err($crate::sonic::SonicError::new(format!($($t)*)))
    };
}
pub(crate) use fail;

/// Runs `headroom sonic …`. Errors are printed here (one line each) and give exit code 2.
pub fn run(a: SonicArgs) -> miette::Result<ExitCode> {
    let result = match a.command {
        SonicCommand::Plan(a) => plan::run(&a),
        SonicCommand::Diff(a) => diff::run(&a),
        SonicCommand::Show(a) => show::run(&a),
        SonicCommand::Config(a) => config_cmd::run(&a),
        SonicCommand::Bufmgrd(a) => bufmgrd::run(&a),
    };
    match result {
        Ok(code) => Ok(code),
        Err(e) => {
            errln!("error: {e}");
            Ok(ExitCode::from(2))
        }
    }
}
