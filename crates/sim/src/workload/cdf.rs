//! Flow-size distributions given as CDF files (the format of the HPCC `traffic_gen/`
//! distributions): one point per line, `<size in bytes> <cumulative percent 0..100>`.
//! Blank lines and `#` comments (whole-line or trailing) are ignored.
//!
//! Invariants of a [`SizeCdf`]:
//! - At least two points; sizes are finite, non-negative and non-decreasing; cumulative
//!   percents are in `[0, 100]`, non-decreasing, and the last one is exactly 100.
//! - The distribution is piecewise linear: the CDF interpolates linearly between
//!   consecutive points (a uniform density on each segment). A first percent above 0 is a
//!   point mass at the first size; two points with the same size and different percents are
//!   a point mass at that size.
//! - [`SizeCdf::sample`] is the inverse of that CDF (rounded to the nearest byte), and
//!   [`SizeCdf::mean`] is the exact mean of the unrounded distribution.
//! - Parse errors are [`WorkloadError::File`] naming the path and the 1-based line (line 0
//!   for the whole file: I/O errors, too few points).

use super::WorkloadError;
use std::path::Path;

/// A flow-size distribution: a piecewise-linear cumulative distribution over bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct SizeCdf {
    /// `(size in bytes, cumulative percent in [0, 100])` as written in the file, validated
    /// as in the module doc.
    points: Vec<(f64, f64)>,
}

/// Names accepted by [`builtin`], in a stable order.
pub const BUILTIN_NAMES: [&str; 4] = ["websearch", "fbhdp", "alistorage", "googlerpc"];

const WEBSEARCH: &str = include_str!("../../../../data/workloads/WebSearch_distribution.txt");
const FBHDP: &str = include_str!("../../../../data/workloads/FbHdp_distribution.txt");
const ALISTORAGE: &str = include_str!("../../../../data/workloads/AliStorage2019.txt");
const GOOGLERPC: &str = include_str!("../../../../data/workloads/GoogleRPC2008.txt");

/// One of the distributions shipped in `data/workloads/`, compiled into the binary so runs
/// work without the files: `"websearch"` (DCTCP web search), `"fbhdp"` (Facebook Hadoop),
/// `"alistorage"` (Alibaba storage 2019), `"googlerpc"` (Google RPC 2008). Names are
/// case-insensitive; `None` for any other name.
pub fn builtin(name: &str) -> Option<SizeCdf> {
    let (file, text) = match name.to_ascii_lowercase().as_str() {
        "websearch" => ("WebSearch_distribution.txt", WEBSEARCH),
        "fbhdp" => ("FbHdp_distribution.txt", FBHDP),
        "alistorage" => ("AliStorage2019.txt", ALISTORAGE),
        "googlerpc" => ("GoogleRPC2008.txt", GOOGLERPC),
        _ => return None,
    };
    // The embedded files are valid (checked by the `builtins_parse` test), so this never
    // discards an error in practice.
    SizeCdf::parse(text, file).ok()
}

fn err(path: &str, line: usize, reason: impl Into<String>) -> WorkloadError {
    WorkloadError::File {
        path: path.to_string(),
        line,
        reason: reason.into(),
    }
}

fn number(path: &str, line: usize, what: &str, s: &str) -> Result<f64, WorkloadError> {
    let v: f64 = s
        .parse()
        .map_err(|_| err(path, line, format!("{what} `{s}` is not a number")))?;
    if !v.is_finite() {
        return Err(err(path, line, format!("{what} `{s}` is not finite")));
    }
    if v < 0.0 {
        return Err(err(path, line, format!("{what} `{s}` is negative")));
    }
    Ok(v)
}

impl SizeCdf {
    /// Parses CDF text; `path` is only used in error messages.
    ///
    /// Errors: a line without exactly two fields, a non-numeric, negative or non-finite
    /// value, a percent above 100, a size or percent smaller than the previous line's, a
    /// last percent other than 100, fewer than two points.
    pub fn parse(text: &str, path: &str) -> Result<SizeCdf, WorkloadError> {
        let mut points: Vec<(f64, f64)> = Vec::new();
        let mut last_line = 0;
        for (i, raw) in text.lines().enumerate() {
            let ln = i + 1;
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() != 2 {
                return Err(err(
                    path,
                    ln,
                    format!(
                        "expected `<bytes> <cumulative percent>`, found {} fields",
                        f.len()
                    ),
                ));
            }
            let size = number(path, ln, "size", f[0])?;
            let pct = number(path, ln, "percent", f[1])?;
            if pct > 100.0 {
                return Err(err(path, ln, format!("percent {pct} is above 100")));
            }
            if let Some(&(ps, pp)) = points.last() {
                if size < ps {
                    return Err(err(
                        path,
                        ln,
                        format!("sizes must not decrease: {size} after {ps}"),
                    ));
                }
                if pct < pp {
                    return Err(err(
                        path,
                        ln,
                        format!("percents must not decrease: {pct} after {pp}"),
                    ));
                }
            }
            points.push((size, pct));
            last_line = ln;
        }
        if points.len() < 2 {
            return Err(err(
                path,
                0,
                format!("a CDF needs at least 2 points, found {}", points.len()),
            ));
        }
        let last = points[points.len() - 1].1;
        if last != 100.0 {
            return Err(err(
                path,
                last_line,
                format!("the last percent must be 100, found {last}"),
            ));
        }
        Ok(SizeCdf { points })
    }

    /// Reads and parses a CDF file (an I/O error is a [`WorkloadError::File`] at line 0).
    pub fn load(path: &Path) -> Result<SizeCdf, WorkloadError> {
        let shown = path.display().to_string();
        let text = crate::input::read_text(path, crate::input::MAX_TEXT_BYTES)
            .map_err(|e| err(&shown, 0, e.to_string()))?;
        SizeCdf::parse(&text, &shown)
    }

    /// The points as `(size in bytes, cumulative percent)`, as written in the file.
    pub fn points(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.points.iter().copied()
    }

    /// The smallest size (the first point).
    pub fn min_size(&self) -> f64 {
        self.points[0].0
    }

    /// The largest size (the last point).
    pub fn max_size(&self) -> f64 {
        self.points[self.points.len() - 1].0
    }

    /// The inverse CDF at `u` in `[0, 1)`, rounded to the nearest byte: the size `s` with
    /// `CDF(s) = u`, interpolating linearly between points. `u` below the first point's
    /// probability gives the first size (its point mass); `u >= 1` gives the last size and
    /// `u < 0` or NaN the first. Monotone non-decreasing in `u`. A distribution starting at
    /// size 0 can return 0; generators clamp sizes to at least 1 byte.
    pub fn sample(&self, u: f64) -> u64 {
        let pts = &self.points;
        // Work in percent, as the file does.
        let u = u * 100.0;
        if u.is_nan() || u < pts[0].1 {
            return pts[0].0.round() as u64;
        }
        // First point whose probability exceeds u; 1.. because pts[0].1 <= u here.
        let j = pts.partition_point(|&(_, p)| p <= u);
        if j >= pts.len() {
            return pts[pts.len() - 1].0.round() as u64;
        }
        let (s0, p0) = pts[j - 1];
        let (s1, p1) = pts[j];
        // p0 <= u < p1, so the denominator is positive.
        let s = s0 + (u - p0) / (p1 - p0) * (s1 - s0);
        s.round() as u64
    }

    /// The exact mean size in bytes of the piecewise-linear distribution: the point mass at
    /// the first size plus, for each segment, its probability times its midpoint.
    pub fn mean(&self) -> f64 {
        let pts = &self.points;
        let mut m = pts[0].0 * pts[0].1;
        for w in pts.windows(2) {
            let ((s0, p0), (s1, p1)) = (w[0], w[1]);
            m += (p1 - p0) * (s0 + s1) / 2.0;
        }
        m / 100.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    const P: &str = "cdf.txt";

    fn file_err(text: &str) -> (usize, String) {
        match SizeCdf::parse(text, P) {
            Err(WorkloadError::File { path, line, reason }) => {
                assert_eq!(path, P);
                (line, reason)
            }
            other => panic!("expected a file error, got {other:?}"),
        }
    }

    #[test]
    fn builtins_parse() {
        for name in BUILTIN_NAMES {
            let c = builtin(name).unwrap_or_else(|| panic!("builtin {name} parses"));
            assert!(c.points().count() >= 9, "{name}");
            assert!(c.mean() > 0.0);
        }
        assert!(builtin("WebSearch").is_some());
        assert!(builtin("nope").is_none());
    }

    #[test]
    fn builtins_match_files() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/workloads");
        for (name, file) in BUILTIN_NAMES.iter().zip([
            "WebSearch_distribution.txt",
            "FbHdp_distribution.txt",
            "AliStorage2019.txt",
            "GoogleRPC2008.txt",
        ]) {
            let loaded = SizeCdf::load(&dir.join(file)).expect("file parses");
            assert_eq!(Some(loaded), builtin(name), "{name}");
        }
    }

    #[test]
    fn sample_endpoints() {
        let c = builtin("websearch").expect("builtin");
        assert_eq!(c.sample(0.0), 0);
        assert_eq!(c.sample(1.0 - 1e-12), 30_000_000);
        assert_eq!(c.sample(1.0), 30_000_000);
        assert_eq!(c.sample(-1.0), 0);
        assert_eq!(c.sample(f64::NAN), 0);
        // Exactly on a point.
        assert_eq!(c.sample(0.15), 10_000);
        assert_eq!(c.sample(0.60), 200_000);
    }

    #[test]
    fn median_of_websearch() {
        // 50% lies between (50000, 40%) and (80000, 53%): 50000 + 10/13 * 30000.
        let c = builtin("websearch").expect("builtin");
        let expect: f64 = 50_000.0 + 10.0 / 13.0 * 30_000.0;
        assert_eq!(c.sample(0.5), expect.round() as u64);
        // And sampling agrees with the file's percent at every point.
        for (s, p) in c.points().skip(1) {
            assert_eq!(c.sample(p / 100.0 - 1e-12), s.round() as u64);
        }
    }

    #[test]
    fn point_mass_at_first_size() {
        let c = SizeCdf::parse("100 50\n200 100\n", P).expect("valid");
        assert_eq!(c.sample(0.0), 100);
        assert_eq!(c.sample(0.49), 100);
        assert_eq!(c.sample(0.75), 150);
        assert!((c.mean() - (0.5 * 100.0 + 0.5 * 150.0)).abs() < 1e-9);
        // A vertical step: mass 0.5 at size 10.
        let s = SizeCdf::parse("0 0\n10 0\n10 50\n20 100\n", P).expect("valid");
        assert_eq!(s.sample(0.2), 10);
        assert_eq!(s.sample(0.75), 15);
        assert!((s.mean() - (0.5 * 10.0 + 0.5 * 15.0)).abs() < 1e-9);
    }

    #[test]
    fn empirical_mean_matches() {
        // Plain Monte Carlo: 200k samples of web search (relative standard error of the
        // sample mean is about 0.5%, so 2% is a 4-sigma bound).
        let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
        let c = builtin("websearch").expect("builtin");
        let n = 200_000;
        let sum: f64 = (0..n).map(|_| c.sample(rng.gen::<f64>()) as f64).sum();
        let emp = sum / n as f64;
        let rel = (emp - c.mean()).abs() / c.mean();
        assert!(
            rel < 0.02,
            "websearch: empirical {emp} vs mean {} ({rel})",
            c.mean()
        );
    }

    #[test]
    fn stratified_mean_matches_all_builtins() {
        // The other distributions are too heavy-tailed for plain Monte Carlo with 200k
        // samples (Google RPC has a coefficient of variation of about 22); one sample per
        // stratum [i/n, (i+1)/n) removes that noise and still checks sample() against mean().
        let mut rng = rand_pcg::Pcg64::seed_from_u64(8);
        for name in BUILTIN_NAMES {
            let c = builtin(name).expect("builtin");
            let n = 200_000;
            let sum: f64 = (0..n)
                .map(|i| c.sample((i as f64 + rng.gen::<f64>()) / n as f64) as f64)
                .sum();
            let emp = sum / n as f64;
            let rel = (emp - c.mean()).abs() / c.mean();
            assert!(
                rel < 0.01,
                "{name}: stratified {emp} vs mean {} ({rel})",
                c.mean()
            );
        }
    }

    #[test]
    fn known_means() {
        // Web search by hand: sum over segments of mass x midpoint = 1,711,250 bytes.
        assert_eq!(builtin("websearch").expect("builtin").mean(), 1_711_250.0);
        let ali = builtin("alistorage").expect("builtin").mean();
        assert!((ali - 40_869.8).abs() < 1e-6, "{ali}");
    }

    #[test]
    fn comments_and_blank_lines() {
        let c = SizeCdf::parse("# size pct\n\n0 0 # start\n\n100 100\n", P).expect("valid");
        assert_eq!(
            c.points().collect::<Vec<_>>(),
            vec![(0.0, 0.0), (100.0, 100.0)]
        );
        assert_eq!(c.min_size(), 0.0);
        assert_eq!(c.max_size(), 100.0);
    }

    #[test]
    fn parse_errors() {
        let (l, r) = file_err("0 0\n100 50\n50 100\n");
        assert_eq!(l, 3);
        assert!(r.contains("sizes must not decrease"), "{r}");
        let (l, r) = file_err("0 0\n100 50\n\n200 40\n300 100\n");
        assert_eq!(l, 4);
        assert!(r.contains("percents must not decrease"), "{r}");
        let (l, r) = file_err("0 0\n100 99\n");
        assert_eq!(l, 2);
        assert!(r.contains("last percent must be 100"), "{r}");
        let (l, r) = file_err("# only one\n100 100\n");
        assert_eq!(l, 0);
        assert!(r.contains("at least 2 points"), "{r}");
        let (l, r) = file_err("0 0\n-5 50\n100 100\n");
        assert_eq!(l, 2);
        assert!(r.contains("negative"), "{r}");
        let (l, r) = file_err("0 0\n5 -1\n100 100\n");
        assert_eq!(l, 2);
        assert!(r.contains("negative"), "{r}");
        let (l, r) = file_err("0 0\n5 x\n100 100\n");
        assert_eq!(l, 2);
        assert!(r.contains("not a number"), "{r}");
        let (l, r) = file_err("0 0\n5\n100 100\n");
        assert_eq!(l, 2);
        assert!(r.contains("found 1 fields"), "{r}");
        let (l, r) = file_err("0 0\n5 120\n");
        assert_eq!(l, 2);
        assert!(r.contains("above 100"), "{r}");
        assert!(file_err("0 0\ninf 100\n").1.contains("not finite"));
        let e = SizeCdf::parse("0 0\n100 50\n50 100\n", P).expect_err("bad");
        assert!(e.to_string().starts_with("cdf.txt:3: "), "{e}");
    }

    #[test]
    fn load_missing_file() {
        let e = SizeCdf::load(Path::new("/nonexistent/cdf.txt")).expect_err("missing");
        assert!(matches!(e, WorkloadError::File { line: 0, .. }), "{e:?}");
    }

    proptest::proptest! {
        #[test]
        fn sample_is_monotone_and_in_range(a in 0.0f64..1.0, b in 0.0f64..1.0) {
            let c = builtin("fbhdp").expect("builtin");
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            proptest::prop_assert!(c.sample(lo) <= c.sample(hi));
            proptest::prop_assert!(c.sample(hi) as f64 <= c.max_size());
        }
    }
}
