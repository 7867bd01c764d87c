//! Output directories: made and checked before a simulation starts, and cleared of what an
//! earlier run wrote there.
//!
//! A command that writes into a directory lists what it wrote in `.headroom-files` there.
//! Before the next command writes into the same directory, the files in that list are
//! removed, so outputs an earlier run wrote and this one does not (a plot, samples from a
//! sample interval since removed) cannot be mistaken for this run's. Files headroom did
//! not write are never touched.
//!
//! Invariants: [`prepare`] fails (naming the directory) before any simulation work when the
//! directory cannot be created or written; only paths inside the directory, as listed by
//! headroom, are removed.

use miette::{miette, Result};
use std::path::{Component, Path, PathBuf};

/// Name of the list of files a command wrote, inside its output directory.
const MANIFEST: &str = ".headroom-files";

/// Largest manifest read: a run writes a few dozen files.
const MAX_MANIFEST_BYTES: u64 = 1 << 20;

/// Creates `dir` if needed, checks that files can be written in it, and removes the files
/// the previous headroom command listed there.
pub fn prepare(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| miette!("output directory {}: cannot create it: {e}", dir.display()))?;
    let probe = dir.join(".headroom-write-test");
    std::fs::write(&probe, b"")
        .and_then(|()| std::fs::remove_file(&probe))
        .map_err(|e| {
            miette!(
                "output directory {}: cannot write in it: {e}",
                dir.display()
            )
        })?;
    let manifest = dir.join(MANIFEST);
    if !manifest.exists() {
        return Ok(());
    }
    let listed = headroom_sim::input::read_text(&manifest, MAX_MANIFEST_BYTES)
        .map_err(|e| miette!("{}: {e}", manifest.display()))?;
    for line in listed.lines() {
        let rel = Path::new(line);
        // Only plain relative paths below the directory: a manifest is data, not orders.
        let inside =
            !line.is_empty() && rel.components().all(|c| matches!(c, Component::Normal(_)));
        let path = dir.join(rel);
        if inside && path.is_file() {
            std::fs::remove_file(&path)
                .map_err(|e| miette!("removing the earlier output {}: {e}", path.display()))?;
        }
    }
    std::fs::remove_file(&manifest).map_err(|e| miette!("removing {}: {e}", manifest.display()))?;
    Ok(())
}

/// Records `files` (those inside `dir`; others are ignored) as what this command wrote.
pub fn record(dir: &Path, files: &[PathBuf]) -> Result<()> {
    let mut list = String::new();
    for f in files {
        if let Ok(rel) = f.strip_prefix(dir) {
            list.push_str(&rel.to_string_lossy());
            list.push('\n');
        }
    }
    let manifest = dir.join(MANIFEST);
    std::fs::write(&manifest, list).map_err(|e| miette!("writing {}: {e}", manifest.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_run_removes_what_the_first_wrote_and_nothing_else() {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = dir.path().join("out");
        prepare(&out).expect("fresh");
        std::fs::create_dir_all(out.join("sih")).expect("subdir");
        let written = [out.join("a.csv"), out.join("sih/b.png")];
        for f in &written {
            std::fs::write(f, "x").expect("write");
        }
        std::fs::write(out.join("notes.md"), "mine").expect("user file");
        record(&out, &written).expect("manifest");
        prepare(&out).expect("again");
        assert!(!out.join("a.csv").exists() && !out.join("sih/b.png").exists());
        assert!(out.join("notes.md").exists(), "not headroom's");
        assert!(!out.join(MANIFEST).exists());
    }

    #[test]
    fn a_manifest_cannot_point_outside_the_directory() {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = dir.path().join("out");
        prepare(&out).expect("fresh");
        std::fs::write(dir.path().join("precious"), "x").expect("outside file");
        std::fs::write(out.join(MANIFEST), "../precious\n/etc/passwd\n").expect("manifest");
        prepare(&out).expect("cleans");
        assert!(dir.path().join("precious").exists());
    }

    #[test]
    fn an_unwritable_place_is_refused_with_its_name() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("f");
        std::fs::write(&file, "x").expect("file");
        let e = prepare(&file.join("sub")).expect_err("below a file");
        assert!(e.to_string().contains("cannot create"), "{e}");
    }
}
