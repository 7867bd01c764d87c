//! Reading input files with a bound on their size.
//!
//! Every file the simulator reads (scenarios, HPCC configs, topology, flow and CDF files)
//! goes through [`read_text`], so a mistaken path (`/dev/zero`, a disk image, a pipe that
//! never ends) is refused with a message instead of exhausting memory.
//!
//! Invariants: at most `limit + 1` bytes are ever read; the error names the limit.

use std::io::{self, Read};
use std::path::Path;

/// Size bound for hand-written inputs: scenarios, configs, topologies, CDFs.
pub const MAX_TEXT_BYTES: u64 = 64 << 20;

/// Size bound for flow lists: [`crate::workload::MAX_FLOWS`] lines of about 50 bytes.
pub const MAX_FLOW_FILE_BYTES: u64 = 1 << 30;

/// Reads the UTF-8 text of `path`, refusing directories and files longer than `limit` bytes
/// (the error is `InvalidData`, with a message naming the limit).
pub fn read_text(path: &Path, limit: u64) -> io::Result<String> {
    let file = std::fs::File::open(path)?;
    if file.metadata()?.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "is a directory, not a file",
        ));
    }
    let mut text = String::new();
    file.take(limit + 1).read_to_string(&mut text)?;
    if text.len() as u64 > limit {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "larger than {}, the limit for this kind of input (is it the right file?)",
                headroom_mech::units::human_bytes(limit)
            ),
        ));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endless_inputs_are_refused_at_the_limit() {
        let e = read_text(Path::new("/dev/zero"), 1024).expect_err("endless");
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert!(e.to_string().contains("1.0 KiB"), "{e}");
    }

    #[test]
    fn directories_and_small_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(read_text(dir.path(), 1024).is_err());
        let f = dir.path().join("a.txt");
        std::fs::write(&f, "abc").expect("write");
        assert_eq!(read_text(&f, 3).expect("fits"), "abc");
        assert!(read_text(&f, 2).is_err());
    }
}
