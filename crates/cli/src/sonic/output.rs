//! Output helpers of the `sonic` commands: JSON text in SONiC's style (keys sorted, 4-space
//! indent, as `sonic-cfggen` and `config save` write it), atomic file writes, and the plain
//! text tables of SONiC's `show` commands (python `tabulate`'s "simple" format).

use std::io::Write;
use std::path::{Path, PathBuf};

use super::{fail, Result};

/// `value` as pretty JSON with 4-space indentation and a final newline. Object keys come out
/// sorted (serde_json's map is ordered), so equal inputs give byte-identical text.
pub fn json_text(value: &serde_json::Value) -> String {
    let two = serde_json::to_string_pretty(value).unwrap_or_default();
    let mut out = String::with_capacity(two.len() * 5 / 4 + 1);
    for line in two.lines() {
        // JSON strings cannot hold a raw newline, so leading spaces are indentation.
        let body = line.trim_start_matches(' ');
        let indent = line.len() - body.len();
        out.extend(std::iter::repeat_n(' ', indent * 2));
        out.push_str(body);
        out.push('\n');
    }
    out
}

/// Writes `text` to `path` atomically: a temporary file in the same directory (with the
/// permissions of the file it replaces), flushed to disk, then renamed over `path`. On error
/// `path` is untouched and the temporary removed.
pub fn write_atomically(path: &Path, text: &str) -> Result<()> {
    write_all_atomically(&[(path, text)])
}

/// Writes several files as [`write_atomically`] does, all or none: every temporary file is
/// written and flushed first, and only then are they renamed over their targets. If any
/// temporary cannot be written, no target is touched and every temporary is removed. (A
/// rename failing after others succeeded is the one partial outcome left; renames in one
/// directory fail only if the directory itself breaks meanwhile.)
pub fn write_all_atomically(files: &[(&Path, &str)]) -> Result<()> {
    let mut temps = Vec::new();
    for (path, text) in files {
        let tmp = temp_path(path);
        let written = (|| {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
            drop(f);
            if let Ok(meta) = std::fs::metadata(path) {
                std::fs::set_permissions(&tmp, meta.permissions())?;
            }
            Ok::<_, std::io::Error>(())
        })();
        temps.push(tmp);
        if let Err(e) = written {
            for t in &temps {
                let _ = std::fs::remove_file(t);
            }
            fail!("cannot write {}: {e}", path.display());
        }
    }
    for (i, ((path, _), tmp)) in files.iter().zip(&temps).enumerate() {
        if let Err(e) = std::fs::rename(tmp, path) {
            for t in &temps[i..] {
                let _ = std::fs::remove_file(t);
            }
            fail!("cannot write {}: {e}", path.display());
        }
    }
    Ok(())
}

/// `.<name>.tmp<pid>` next to `path`.
fn temp_path(path: &Path) -> PathBuf {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "out".into());
    dir.join(format!(".{name}.tmp{}", std::process::id()))
}

/// A text table: columns left-aligned, two spaces apart, a dashed rule under the header
/// (or, without header, above and below the rows). Trailing spaces are trimmed.
#[derive(Clone, Debug, Default)]
pub struct Table {
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column headers.
    pub fn new<S: Into<String>>(headers: impl IntoIterator<Item = S>) -> Table {
        Table {
            headers: headers.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    /// A table without header (SONiC's key/value blocks).
    pub fn headless() -> Table {
        Table::default()
    }

    /// Appends a row.
    pub fn row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) {
        self.rows.push(cells.into_iter().map(Into::into).collect());
    }

    /// The rendered table, each line ending in a newline.
    pub fn render(&self) -> String {
        let ncols = self
            .rows
            .iter()
            .map(Vec::len)
            .chain(std::iter::once(self.headers.len()))
            .max()
            .unwrap_or(0);
        let mut widths = vec![0usize; ncols];
        for r in self.rows.iter().chain(std::iter::once(&self.headers)) {
            for (i, c) in r.iter().enumerate() {
                widths[i] = widths[i].max(c.chars().count());
            }
        }
        let line = |cells: &[String]| {
            let mut s = String::new();
            for (i, w) in widths.iter().enumerate() {
                if i > 0 {
                    s.push_str("  ");
                }
                let c = cells.get(i).map(String::as_str).unwrap_or("");
                s.push_str(c);
                s.extend(std::iter::repeat_n(' ', w - c.chars().count()));
            }
            let mut t = s.trim_end().to_string();
            t.push('\n');
            t
        };
        let rule = line(&widths.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>());
        let mut out = String::new();
        if self.headers.is_empty() {
            out.push_str(&rule);
        } else {
            out.push_str(&line(&self.headers));
            out.push_str(&rule);
        }
        for r in &self.rows {
            out.push_str(&line(r));
        }
        if self.headers.is_empty() {
            out.push_str(&rule);
        }
        out
    }
}

/// Compares names the way SONiC's `show` commands sort ports (natsort): runs of digits by
/// value, so `Ethernet8` comes before `Ethernet16` and `Ethernet104`.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    fn chunks(s: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let mut start = 0;
        let b = s.as_bytes();
        for i in 1..=b.len() {
            if i == b.len() || b[i].is_ascii_digit() != b[start].is_ascii_digit() {
                out.push((b[start].is_ascii_digit(), &s[start..i]));
                start = i;
            }
        }
        out
    }
    let (ca, cb) = (chunks(a), chunks(b));
    for (x, y) in ca.iter().zip(cb.iter()) {
        let o = match (x, y) {
            ((true, x), (true, y)) => {
                let (x, y) = (x.trim_start_matches('0'), y.trim_start_matches('0'));
                x.len().cmp(&y.len()).then_with(|| x.cmp(y))
            }
            ((_, x), (_, y)) => x.cmp(y),
        };
        if o != std::cmp::Ordering::Equal {
            return o;
        }
    }
    ca.len().cmp(&cb.len()).then_with(|| a.cmp(b))
}

/// SONiC's key/value block: `Title: name`, then the pairs between dashed rules, then a blank
/// line (the format of `show buffer configuration|information`).
pub fn kv_block(title: &str, pairs: &[(String, String)]) -> String {
    let mut t = Table::headless();
    for (k, v) in pairs {
        t.row([k.clone(), v.clone()]);
    }
    format!("{title}\n{}\n", t.render())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_uses_four_spaces_and_sorted_keys() {
        let v: serde_json::Value =
            serde_json::from_str(r#"{"b": {"y": "1", "x": [1, 2]}, "a": "  two  "}"#)
                .expect("json");
        assert_eq!(
            json_text(&v),
            "{\n    \"a\": \"  two  \",\n    \"b\": {\n        \"x\": [\n            1,\n            2\n        ],\n        \"y\": \"1\"\n    }\n}\n"
        );
    }

    #[test]
    fn tables_like_tabulate() {
        let block = kv_block(
            "Pool: p",
            &[
                ("mode".into(), "dynamic".into()),
                ("size".into(), "13945824".into()),
            ],
        );
        assert_eq!(
            block,
            "Pool: p\n----  --------\nmode  dynamic\nsize  13945824\n----  --------\n\n"
        );
        let mut names = vec!["Ethernet16", "Ethernet104", "Ethernet8", "Ethernet8a", "lo"];
        names.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            names,
            ["Ethernet8", "Ethernet8a", "Ethernet16", "Ethernet104", "lo"]
        );
        let mut t = Table::new(["Port", "PG"]);
        t.row(["Ethernet0", "3-4"]);
        assert_eq!(
            t.render(),
            "Port       PG\n---------  ---\nEthernet0  3-4\n"
        );
    }
}
