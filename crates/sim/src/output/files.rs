//! Writing a run's files: `flows.csv`, `pfc.csv`, `credit.csv`, the time series,
//! `summary.json`, and the HPCC simulator's `fct.txt` and `pfc.txt` on request.
//!
//! Invariants: every file goes to a hidden temporary name first and is renamed into place
//! only once all have been written, so a failed write leaves no half-written file under a
//! final name; every error names the file or directory.

use super::{format_ns, hpcc_ip, marking, Summary};
use crate::config::SimConfig;
use crate::results::{CreditBlock, FlowRecord, PfcRecord, RunResults};
use headroom_mech::units::Time;
use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// What [`write_all`] writes besides the standard files.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriteOptions {
    /// Also write `fct.txt` and `pfc.txt` in the ns-3 HPCC simulator's formats.
    pub compat_hpcc: bool,
    /// Keep the wall-clock section of the summary in `summary.json` (off: it is written as
    /// `null`, so the file is deterministic).
    pub include_wall_time: bool,
}

/// Why output files could not be written. Every variant names the file or directory.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The output directory could not be created.
    #[error("cannot create output directory {}: {source}", path.display())]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// A file could not be written (or moved into place).
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file, under its final name.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// The summary could not be serialized.
    #[error("cannot serialize {}: {source}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// The serializer's error.
        source: serde_json::Error,
    },
}

impl OutputError {
    /// The file or directory the error is about.
    pub fn path(&self) -> &Path {
        match self {
            OutputError::CreateDir { path, .. }
            | OutputError::Write { path, .. }
            | OutputError::Json { path, .. } => path,
        }
    }
}

/// Files written to temporary names, to be renamed into place together.
struct Staging<'a> {
    dir: &'a Path,
    /// (temporary path, final path), in writing order.
    files: Vec<(PathBuf, PathBuf)>,
}

impl Staging<'_> {
    /// Writes `name` to its temporary path with `body`.
    fn file(
        &mut self,
        name: &str,
        body: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    ) -> Result<(), OutputError> {
        let path = self.dir.join(name);
        let tmp = self.dir.join(format!(".{name}.tmp"));
        // Registered before creating it, so a failure below also removes it.
        self.files.push((tmp.clone(), path.clone()));
        let result = File::create(&tmp).and_then(|f| {
            let mut w = BufWriter::new(f);
            body(&mut w)?;
            let f = w.into_inner().map_err(|e| e.into_error())?;
            f.sync_all()
        });
        result.map_err(|source| OutputError::Write { path, source })
    }

    /// Renames every file into place.
    fn commit(&mut self) -> Result<Vec<PathBuf>, OutputError> {
        let mut done = Vec::with_capacity(self.files.len());
        while !self.files.is_empty() {
            let (tmp, path) = self.files.remove(0);
            if let Err(source) = fs::rename(&tmp, &path) {
                // Keep it listed so `abort` removes it with the rest.
                self.files.insert(0, (tmp, path.clone()));
                return Err(OutputError::Write { path, source });
            }
            done.push(path);
        }
        Ok(done)
    }

    /// Removes the temporary files not renamed yet.
    fn abort(&mut self) {
        for (tmp, _) in self.files.drain(..) {
            let _ = fs::remove_file(tmp);
        }
    }
}

/// Writes the files of a run into `dir` (created if missing) and returns their paths:
///
/// | file | content |
/// | --- | --- |
/// | `flows.csv` | `id,src,dst,priority,size,start_ns,finish_ns,fct_ns,ideal_fct_ns,slowdown,retransmitted,delivered_bytes`; one row per flow by id; `finish_ns`, `fct_ns`, `slowdown` empty for unfinished flows; `size`, `retransmitted` and `delivered_bytes` in bytes |
/// | `summary.json` | the [`Summary`], pretty-printed, keys in struct order |
/// | `pfc.csv` | `time_ns,node,port,priority,kind,quanta,scope`; one row per PFC frame *sent* (`kind` is `pause` or `resume`; `scope` is `queue`, or `port` for a port-level frame pausing every class, whose priority column is 0), in sending order |
/// | `queues.csv` | `time_ns,node,port,queue,bytes`: non-empty egress queues at each sample (only if sampled) |
/// | `buffer.csv` | `time_ns,node,used_bytes,headroom_bytes`: each switch at each sample (only if sampled) |
/// | `rates.csv` | `time_ns,flow,gbps`: active flows' sending rates at each sample (only if sampled) |
/// | `fct.txt` | with `compat_hpcc`: HPCC's `sip dip sport dport size start_ns fct_ns standalone_fct_ns` |
/// | `pfc.txt` | with `compat_hpcc`: HPCC's `time_ns node node_type port_index type` |
///
/// Times are ns as [`format_ns`] writes them; floats have six decimals.
///
/// HPCC formats (as the HPCC simulator's `third.cc` prints them): `fct.txt` has one line per
/// finished flow in completion order (ties by flow id), IPs as `%08x` of [`hpcc_ip`], times
/// in whole ns rounded down (`fct_ns` is the exact FCT rounded down), and
/// `standalone_fct_ns` is this simulator's ideal FCT (not HPCC's own base-RTT formula).
/// `pfc.txt` has one line per PFC frame *received*, in arrival order: node type 1 for a
/// switch and 0 for a host, port index = local port + 1 (ns-3 device 0 is the loopback),
/// type 1 for PAUSE and 0 for RESUME.
///
/// Files go to temporary names first and are renamed once all are written; on error the
/// temporary files are removed.
pub fn write_all(
    dir: &Path,
    results: &RunResults,
    cfg: &SimConfig,
    summary: &Summary,
    opts: &WriteOptions,
) -> Result<Vec<PathBuf>, OutputError> {
    let _ = cfg; // Everything needed is in `results` and `summary`; kept for future formats.
    fs::create_dir_all(dir).map_err(|source| OutputError::CreateDir {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut st = Staging {
        dir,
        files: Vec::new(),
    };
    let result = stage_all(&mut st, results, summary, opts).and_then(|()| st.commit());
    if result.is_err() {
        st.abort();
    }
    result
}

fn stage_all(
    st: &mut Staging<'_>,
    results: &RunResults,
    summary: &Summary,
    opts: &WriteOptions,
) -> Result<(), OutputError> {
    st.file("flows.csv", |w| write_flows_csv(w, results))?;

    let mut s = summary.clone();
    if !opts.include_wall_time {
        s.wall = None;
    }
    let mut json = serde_json::to_vec_pretty(&s).map_err(|source| OutputError::Json {
        path: st.dir.join("summary.json"),
        source,
    })?;
    json.push(b'\n');
    st.file("summary.json", |w| w.write_all(&json))?;

    if results.pfc_log {
        st.file("pfc.csv", |w| write_pfc_csv(w, &results.pfc_sent))?;
    }
    // "pfc", "credit" or "mixed", after "flow-channels/" on a flow-channel fabric.
    let links = summary.config.flow_control.rsplit('/').next();
    if links != Some("pfc") && results.credit_log {
        st.file("credit.csv", |w| {
            write_credit_csv(w, &results.credit_blocks)
        })?;
    }

    if !results.queue_samples.is_empty() {
        st.file("queues.csv", |w| {
            writeln!(w, "time_ns,node,port,queue,bytes")?;
            for q in &results.queue_samples {
                let t = format_ns(q.time);
                writeln!(w, "{t},{},{},{},{}", q.node, q.port, q.queue, q.bytes)?;
            }
            Ok(())
        })?;
    }
    if !results.buffer_samples.is_empty() {
        st.file("buffer.csv", |w| {
            writeln!(w, "time_ns,node,used_bytes,headroom_bytes")?;
            for b in &results.buffer_samples {
                writeln!(
                    w,
                    "{},{},{},{}",
                    format_ns(b.time),
                    b.node,
                    b.used,
                    b.headroom
                )?;
            }
            Ok(())
        })?;
    }
    if !results.mark_samples.is_empty() {
        st.file("marks.csv", |w| {
            marking::write_marks_csv(w, &results.mark_samples)
        })?;
    }
    if !results.rate_samples.is_empty() {
        st.file("rates.csv", |w| {
            writeln!(w, "time_ns,flow,gbps")?;
            for r in &results.rate_samples {
                writeln!(w, "{},{},{:.6}", format_ns(r.time), r.flow, r.gbps)?;
            }
            Ok(())
        })?;
    }
    if opts.compat_hpcc {
        st.file("fct.txt", |w| write_hpcc_fct(w, results))?;
        if results.pfc_log {
            st.file("pfc.txt", |w| write_hpcc_pfc(w, &results.pfc_received))?;
        }
    }
    Ok(())
}

fn write_flows_csv(w: &mut dyn Write, results: &RunResults) -> io::Result<()> {
    writeln!(
        w,
        "id,src,dst,priority,size,start_ns,finish_ns,fct_ns,ideal_fct_ns,slowdown,retransmitted,\
         delivered_bytes"
    )?;
    for f in &results.flows {
        let (finish, fct, slowdown) = match (f.finish, f.fct(), f.slowdown()) {
            (Some(fin), Some(fct), Some(s)) => (format_ns(fin), format_ns(fct), format!("{s:.6}")),
            _ => (String::new(), String::new(), String::new()),
        };
        writeln!(
            w,
            "{},{},{},{},{},{},{finish},{fct},{},{slowdown},{},{}",
            f.id,
            f.src,
            f.dst,
            f.prio,
            f.size,
            format_ns(f.start),
            format_ns(f.ideal_fct),
            f.retransmitted,
            f.delivered
        )?;
    }
    Ok(())
}

fn write_pfc_csv(w: &mut dyn Write, records: &[PfcRecord]) -> io::Result<()> {
    writeln!(w, "time_ns,node,port,priority,kind,quanta,scope")?;
    for r in records {
        let kind = if r.quanta == 0 { "resume" } else { "pause" };
        let scope = if r.port_level { "port" } else { "queue" };
        writeln!(
            w,
            "{},{},{},{},{kind},{},{scope}",
            format_ns(r.time),
            r.node,
            r.port,
            r.prio,
            r.quanta
        )?;
    }
    Ok(())
}

fn write_credit_csv(w: &mut dyn Write, blocks: &[CreditBlock]) -> io::Result<()> {
    writeln!(w, "start_ns,end_ns,node,port,vl")?;
    for b in blocks {
        writeln!(
            w,
            "{},{},{},{},{}",
            format_ns(b.start),
            format_ns(b.end),
            b.node,
            b.port,
            b.vl
        )?;
    }
    Ok(())
}

fn write_hpcc_fct(w: &mut dyn Write, results: &RunResults) -> io::Result<()> {
    let mut done: Vec<(&FlowRecord, Time, Time)> = results
        .flows
        .iter()
        .filter_map(|f| Some((f, f.finish?, f.fct()?)))
        .collect();
    done.sort_by_key(|(f, finish, _)| (*finish, f.id));
    for (f, _, fct) in done {
        writeln!(
            w,
            "{:08x} {:08x} {} {} {} {} {} {}",
            hpcc_ip(f.src),
            hpcc_ip(f.dst),
            f.sport,
            f.dport,
            f.size,
            f.start.as_ns(),
            fct.as_ns(),
            f.ideal_fct.as_ns()
        )?;
    }
    Ok(())
}

fn write_hpcc_pfc(w: &mut dyn Write, records: &[PfcRecord]) -> io::Result<()> {
    for r in records {
        writeln!(
            w,
            "{} {} {} {} {}",
            r.time.as_ns(),
            r.node,
            u8::from(r.is_switch),
            u32::from(r.port) + 1,
            u8::from(r.quanta != 0)
        )?;
    }
    Ok(())
}
