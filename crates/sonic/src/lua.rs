//! Lua 5.1 number semantics, as seen by SONiC's buffer plugins.
//!
//! The vendor plugins run inside Redis' embedded Lua 5.1, whose only number type is an IEEE-754
//! double. Two conversions matter for bit compatibility:
//!
//! - [`tonumber`]: how a plugin reads a string field (`tonumber(v)`): leading and trailing
//!   white space allowed, decimal with optional fraction and exponent, or a hexadecimal
//!   integer `0x…`. Anything else (including the empty string) is "not a number" (`None`).
//! - [`format_number`]: how a plugin prints a number into its result strings (`"%.14g"`):
//!   integral values without a decimal point.
//!
//! Invariants: `tonumber` never returns NaN or an infinity (the grammar accepted here has no
//! spelling for them, unlike C's `strtod`, which SONiC never feeds such words anyway), and
//! `format_number(tonumber(s))` is the identity for every canonical decimal integer `s` below
//! 2^53.

/// Parses a string as Lua 5.1's `tonumber` does for the inputs SONiC tables contain.
///
/// Accepted: optional ASCII white space, an optional sign, then either `0x`/`0X` followed by
/// hexadecimal digits (an integer), or decimal digits with an optional fraction and an
/// optional exponent (`1`, `1.5`, `.5`, `5.`, `1e3`), then optional white space. Returns
/// `None` for everything else, including the empty string. Values that overflow to infinity
/// are rejected too.
pub fn tonumber(s: &str) -> Option<f64> {
    let t = s.trim_matches(|c: char| c.is_ascii_whitespace());
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let v = if let Some(hex) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        hex.bytes().fold(0f64, |acc, b| {
            let d = (b as char).to_digit(16).unwrap_or(0);
            acc * 16.0 + f64::from(d)
        })
    } else {
        if !is_decimal(body) {
            return None;
        }
        body.parse::<f64>().ok()?
    };
    if !v.is_finite() {
        return None;
    }
    Some(if neg { -v } else { v })
}

/// `digits [. digits] [e [sign] digits]` with at least one mantissa digit.
fn is_decimal(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    let mut mant = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
        mant += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
            mant += 1;
        }
    }
    if mant == 0 {
        return false;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    i == b.len()
}

/// Formats a number as Lua 5.1 prints it (`string.format("%.14g", v)`, which is also what
/// `..` concatenation uses).
///
/// Integral values below 10^14 in magnitude print as plain integers (`19456`, `-3`); other
/// values use 14 significant digits with trailing zeros removed, switching to exponent form
/// (`1e+15`) as C's `%g` does.
pub fn format_number(v: f64) -> String {
    if v.is_nan() {
        return "nan".to_string();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    // `{:.13e}` gives exactly 14 significant digits and the decimal exponent after rounding.
    let sci = format!("{v:.13e}");
    let (mant, exp) = match sci.split_once('e') {
        Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
        None => (sci.as_str(), 0),
    };
    if (-4..14).contains(&exp) {
        let prec = usize::try_from(13 - exp).unwrap_or(0);
        strip_zeros(&format!("{v:.prec$}"))
    } else {
        let m = strip_zeros(mant);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{m}e{sign}{:02}", exp.abs())
    }
}

/// Removes trailing zeros after a decimal point, and the point itself if nothing follows.
fn strip_zeros(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tonumber_accepts_lua_forms() {
        assert_eq!(tonumber("19"), Some(19.0));
        assert_eq!(tonumber(" 0.8 "), Some(0.8));
        assert_eq!(tonumber("3.8"), Some(3.8));
        assert_eq!(tonumber("-8"), Some(-8.0));
        assert_eq!(tonumber("0x10"), Some(16.0));
        assert_eq!(tonumber("1e3"), Some(1000.0));
        assert_eq!(tonumber(".5"), Some(0.5));
        assert_eq!(tonumber("5."), Some(5.0));
    }

    #[test]
    fn tonumber_rejects_non_numbers() {
        for s in [
            "", " ", "abc", "40m", "1e", "0x", "inf", "nan", "--1", "1 2", "1e999",
        ] {
            assert_eq!(tonumber(s), None, "{s:?}");
        }
    }

    #[test]
    fn format_matches_percent_14g() {
        assert_eq!(format_number(19456.0), "19456");
        assert_eq!(format_number(-3.0), "-3");
        assert_eq!(format_number(0.0), "0");
        assert_eq!(format_number(819.2), "819.2");
        assert_eq!(format_number(625.0 / 0.99), "631.31313131313");
        assert_eq!(format_number(1e15), "1e+15");
        assert_eq!(format_number(12345678901234.0), "12345678901234");
        assert_eq!(format_number(0.0001), "0.0001");
        assert_eq!(format_number(0.00001), "1e-05");
        assert_eq!(format_number(16417248.0), "16417248");
    }
}
