//! `docs/scenario.md` cannot drift from the parser.
//!
//! The reference documents each table of the scenario format under a heading that names it
//! in code (`` ### `[topology]` `kind = "star"` ``, `## Top level`), with a key table whose
//! first column is `key`. Its ```toml blocks are examples. The test
//! - parses every example with [`scenario::accepted_keys`] (a fragment without `[topology]`
//!   gets an 8-host star appended, one without `stop_time` gets `stop_time = "1ms"`); each
//!   must be accepted;
//! - takes from the parser, for every table the examples reached, the keys it accepts (the
//!   lists its unknown-key check uses) and requires the doc's key table of that table to
//!   list exactly those: a key the parser accepts is missing from the doc, or the doc names a
//!   key the parser rejects, and the test fails;
//! - requires every accepted key to be written in some example, so a new key (and with it
//!   a new sub-table) cannot go unexamined, and every doc key table to belong to a table
//!   the examples reached;
//! - requires an example of every value of the keys that select a table's keys
//!   ([`scenario::variants`]: topology and workload kinds, headroom formulas), so a new
//!   kind cannot go undocumented.

use headroom_sim::scenario::{self, TableKeys};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// (table, variant) as `accepted_keys` names them.
type TableId = (String, String);

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn reference() -> String {
    let path = repo_root().join("docs/scenario.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The code spans of a line, in order.
fn code_spans(line: &str) -> Vec<&str> {
    line.split('`').skip(1).step_by(2).collect()
}

/// The tables a heading documents, if it names any: `[switch.pfc]` → `switch.pfc`,
/// `[[workload]]` `kind = "poisson"` → (`workload`, `kind = "poisson"`), `Top level` → "",
/// and tables of the same keys side by side (`[workload.hosts]`, `[workload.senders]`).
fn heading_tables(heading: &str) -> Vec<TableId> {
    let text = heading.trim_start_matches('#').trim();
    if text == "Top level" {
        return vec![(String::new(), String::new())];
    }
    let spans = code_spans(text);
    let variant = spans
        .iter()
        .find(|s| s.contains(" = "))
        .map_or(String::new(), |s| s.to_string());
    spans
        .iter()
        .take_while(|s| s.starts_with('['))
        .map(|t| {
            let table = t.trim_matches(|c| c == '[' || c == ']').to_string();
            (table, variant.clone())
        })
        .collect()
}

/// The key tables of the reference, by the table their heading names.
fn documented_keys(doc: &str) -> BTreeMap<TableId, BTreeSet<String>> {
    let mut out: BTreeMap<TableId, BTreeSet<String>> = BTreeMap::new();
    let mut heading: Option<String> = None;
    let mut in_fence = false;
    let mut lines = doc.lines().peekable();
    while let Some(line) = lines.next() {
        if line.starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        if line.starts_with('#') {
            heading = Some(line.to_string());
            continue;
        }
        if !line.starts_with("| key |") {
            continue;
        }
        let h = heading.clone().unwrap_or_default();
        let ids = heading_tables(&h);
        assert!(
            !ids.is_empty(),
            "a key table under `{h}`, which names no table"
        );
        for id in &ids {
            assert!(
                !out.contains_key(id),
                "two key tables for {id:?} (second under `{h}`)"
            );
        }
        lines.next(); // the |---| row
        let mut keys = BTreeSet::new();
        while let Some(row) = lines.next_if(|l| l.starts_with('|')) {
            let cell = row.split('|').nth(1).unwrap_or("").trim();
            let key = cell.trim_matches('`').to_string();
            assert!(keys.insert(key.clone()), "`{key}` twice under `{h}`");
        }
        for id in ids {
            out.insert(id, keys.clone());
        }
    }
    out
}

/// The ```toml blocks of the reference, with the line each starts on.
fn examples(doc: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (i, line) in doc.lines().enumerate() {
        match &mut current {
            None if line.trim() == "```toml" => current = Some((i + 1, String::new())),
            Some(_) if line.trim() == "```" => out.extend(current.take()),
            Some((_, text)) => {
                text.push_str(line);
                text.push('\n');
            }
            None => {}
        }
    }
    out
}

const FILLER_TOPOLOGY: &str = "\n[topology]\nkind = \"star\"\nhosts = 8\nrate = \"100Gbps\"\n";

/// Every example's tables, merged; the keys the test itself added are not counted as
/// written.
fn parse_examples(doc: &str) -> BTreeMap<TableId, TableKeys> {
    let mut all: BTreeMap<TableId, TableKeys> = BTreeMap::new();
    for (line, block) in examples(doc) {
        let has_topology = block.lines().any(|l| l.trim() == "[topology]");
        let has_stop = block.lines().any(|l| l.starts_with("stop_time"));
        let mut text = block.clone();
        if !has_stop {
            text = format!("stop_time = \"1ms\"\n{text}");
        }
        if !has_topology {
            text.push_str(FILLER_TOPOLOGY);
        }
        // As if the scenario were at the repository root, as the reference says.
        let path = repo_root().join("reference.toml");
        let mut keys = scenario::accepted_keys(&text, &path).unwrap_or_else(|e| {
            panic!("docs/scenario.md:{line}: the example is rejected: {e}\n{text}")
        });
        let top = keys.entry((String::new(), String::new())).or_default();
        if !has_stop {
            top.written.remove("stop_time");
        }
        if !has_topology {
            top.written.remove("topology");
            keys.remove(&("topology".to_string(), "kind = \"star\"".to_string()));
        }
        for (id, k) in keys {
            let e = all.entry(id).or_default();
            e.accepted.extend(k.accepted);
            e.written.extend(k.written);
        }
    }
    all
}

fn show(id: &TableId) -> String {
    match (id.0.as_str(), id.1.as_str()) {
        ("", _) => "the top level".to_string(),
        (t, "") => format!("[{t}]"),
        (t, v) => format!("[{t}] {v}"),
    }
}

/// Everything in `doc` that disagrees with the parser, one sentence each.
fn problems(doc: &str) -> Vec<String> {
    let documented = documented_keys(doc);
    let parsed = parse_examples(doc);
    let mut problems = Vec::new();
    for (id, keys) in &parsed {
        if keys.accepted.is_empty() {
            continue;
        }
        let Some(doc_keys) = documented.get(id) else {
            problems.push(format!("{} has no key table in the reference", show(id)));
            continue;
        };
        for k in keys.accepted.difference(doc_keys) {
            problems.push(format!(
                "{}: `{k}` is accepted but not documented",
                show(id)
            ));
        }
        for k in doc_keys.difference(&keys.accepted) {
            problems.push(format!("{}: `{k}` is documented but rejected", show(id)));
        }
        for k in keys.accepted.difference(&keys.written) {
            problems.push(format!("{}: `{k}` has no example", show(id)));
        }
    }
    for id in documented.keys() {
        if parsed.get(id).is_none_or(|k| k.accepted.is_empty()) {
            problems.push(format!(
                "{} is documented, but no example reaches a table the parser reads so",
                show(id)
            ));
        }
    }
    for v in scenario::variants() {
        for (value, keys) in v.values {
            let id = (v.table.to_string(), format!("{} = \"{value}\"", v.key));
            if !keys.is_empty() && !parsed.contains_key(&id) {
                problems.push(format!("{} has no example", show(&id)));
            }
        }
    }
    problems
}

#[test]
fn every_example_is_accepted_and_every_key_is_documented() {
    let doc = reference();
    assert!(
        documented_keys(&doc).len() > 30,
        "the key tables were not found"
    );
    let problems = problems(&doc);
    assert!(
        problems.is_empty(),
        "docs/scenario.md:\n{}",
        problems.join("\n")
    );
}

/// The check catches what it claims: a key renamed in the reference, a key without an
/// example, a kind without a section.
#[test]
fn drift_is_detected() {
    let doc = reference();
    let edit = |from: &str, to: &str| {
        assert!(doc.contains(from), "{from}");
        problems(&doc.replacen(from, to, 1))
    };
    assert_eq!(
        edit("| `quanta` |", "| `quantum` |"),
        [
            "[switch.pfc]: `quanta` is accepted but not documented",
            "[switch.pfc]: `quantum` is documented but rejected",
        ]
    );
    assert_eq!(
        edit("seed_offset = 2\n", ""),
        ["[workload] kind = \"permutation\": `seed_offset` has no example"]
    );
    assert_eq!(
        edit("kind = \"fat-tree\"\nk = 4", "kind = \"star\"\nhosts = 4"),
        [
            "[topology] kind = \"fat-tree\" is documented, but no example reaches a table the parser reads so",
            "[topology] kind = \"fat-tree\" has no example",
        ]
    );
}
