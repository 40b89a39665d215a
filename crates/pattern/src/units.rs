//! Sizes and durations as people write them: `32KiB`, `4k`, `1G`, `100us`.
//!
//! This is the one size parser of the whole tool (flags, pattern files,
//! simulator profiles and `sim:` overrides all call [`parse_size`]), so a
//! unit means the same everywhere. Units follow IEC 80000-13, as fio's
//! documentation and drive makers do: `KiB`, `MiB`, `GiB`, `TiB` are powers
//! of 1024; `KB`, `MB`, `GB`, `TB` are powers of 1000 (an "80 GB" drive
//! holds 80 * 10^9 bytes); the bare letters `K`, `M`, `G`, `T` are the
//! binary units, as in `4k` IOs. A decimal size that is not a whole number
//! of sectors is refused later where alignment matters, never rounded.

pub use crate::error::UnitError;

/// How much of a user's text an error message quotes: enough to recognise
/// it, never megabytes of a file.
const QUOTE_CHARS: usize = 40;

/// `text` as an error message quotes it: trimmed to [`QUOTE_CHARS`]
/// characters with an ellipsis.
pub fn quote(text: &str) -> String {
    match text.char_indices().nth(QUOTE_CHARS) {
        Some((i, _)) => format!("{}...", &text[..i]),
        None => text.to_string(),
    }
}

/// Parses a byte count: a plain number of bytes, or a number with a suffix
/// `B`, `K`/`KiB`/`KB`, `M`/`MiB`/`MB`, `G`/`GiB`/`GB`, `T`/`TiB`/`TB`,
/// `P`/`PiB`/`PB` (see
/// the module comment: `KB` is 1000, `KiB` and `K` are 1024), or `s`
/// (512-byte sectors).
pub fn parse_size(text: &str) -> Result<u64, UnitError> {
    let shown = quote(text);
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let num = num.replace('_', "");
    if num.is_empty() {
        return Err(UnitError::NotASize { text: shown });
    }
    let mult: u64 = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "s" => 512,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "t" | "tib" => 1 << 40,
        "p" | "pib" => 1 << 50,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        // Drive makers rate lifetime writes in petabytes (the X25-E: 2 PB).
        "pb" => 1_000_000_000_000_000,
        other => {
            return Err(UnitError::UnknownSizeUnit {
                text: shown,
                unit: quote(other),
            })
        }
    };
    if num.contains('.') {
        let Ok(v) = num.parse::<f64>() else {
            return Err(UnitError::NotASize { text: shown });
        };
        let bytes = v * mult as f64;
        if !bytes.is_finite() || bytes.fract() != 0.0 || bytes < 0.0 {
            return Err(UnitError::FractionalBytes { text: shown });
        }
        // `u64::MAX as f64` rounds up to 2^64, which `as u64` would
        // silently clamp to u64::MAX: 2^64 and above do not fit.
        if bytes >= u64::MAX as f64 {
            return Err(UnitError::SizeTooLarge { text: shown });
        }
        Ok(bytes as u64)
    } else {
        let Ok(v) = num.parse::<u64>() else {
            return Err(UnitError::NotASize { text: shown });
        };
        v.checked_mul(mult)
            .ok_or(UnitError::SizeTooLarge { text: shown })
    }
}

/// Parses a run time as fio reads `runtime`: a bare number is seconds
/// (fio's default unit for it), or a number with `ns`, `us`, `ms`, `s`,
/// `m` (minutes), `h` or `d`. Unlike a pause, a bare runtime is not
/// ambiguous: every fio user writes `--runtime 60` for a minute.
pub fn parse_runtime_ns(text: &str) -> Result<u64, UnitError> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let minutes = match suffix.trim() {
        "" => Some(1),
        "m" | "min" => Some(60),
        "h" => Some(3_600),
        "d" => Some(86_400),
        _ => None,
    };
    match minutes {
        Some(seconds_per_unit) if !num.is_empty() => num
            .parse::<u64>()
            .ok()
            .and_then(|n| n.checked_mul(seconds_per_unit * 1_000_000_000))
            .ok_or(UnitError::DurationOutOfRange { text: quote(text) }),
        _ => parse_duration_ns(text),
    }
}

/// Parses a duration with a mandatory unit: `ns`, `us` (or `µs`), `ms`, `s`.
/// A bare number is refused: "pause 100" is too easy to get wrong by 1000x.
pub fn parse_duration_ns(text: &str) -> Result<u64, UnitError> {
    let shown = quote(text);
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let num = num.replace('_', "");
    let mult: f64 = match suffix.trim() {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "" => return Err(UnitError::MissingTimeUnit { text: shown }),
        other => {
            return Err(UnitError::UnknownTimeUnit {
                text: shown,
                unit: quote(other),
            })
        }
    };
    let Ok(v) = num.parse::<f64>() else {
        return Err(UnitError::NotADuration { text: shown });
    };
    let ns = v * mult;
    if !ns.is_finite() || ns < 0.0 || ns > u64::MAX as f64 {
        return Err(UnitError::DurationOutOfRange { text: shown });
    }
    Ok(ns.round() as u64)
}

/// Formats bytes with the largest binary unit that divides them exactly.
pub fn format_size(bytes: u64) -> String {
    const BINARY_UNITS: [(&str, u64); 4] = [
        ("TiB", 1 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ];
    // A size given in decimal units (a "32GB" drive, 32 * 10^9 B) is not a
    // whole number of GiB: print it as given (32GB), not as 31250000KiB.
    // Of the exact forms, the one with the fewest digits; binary on a tie.
    // (Not KB: byte counts below a megabyte, IO sizes, stay in bytes or KiB.)
    const DECIMAL_UNITS: [(&str, u64); 3] = [
        ("TB", 1_000_000_000_000),
        ("GB", 1_000_000_000),
        ("MB", 1_000_000),
    ];
    let largest_exact = |units: &[(&'static str, u64)]| {
        units
            .iter()
            .find(|(_, unit)| bytes >= *unit && bytes.is_multiple_of(*unit))
            .map(|&(name, unit)| (bytes / unit, name))
    };
    let binary = largest_exact(&BINARY_UNITS);
    let decimal = largest_exact(&DECIMAL_UNITS);
    let (value, name) = match (binary, decimal) {
        (Some(b), Some(d)) if d.0 < b.0 && d.0.to_string().len() < b.0.to_string().len() => d,
        (Some(b), _) => b,
        (None, Some(d)) => d,
        (None, None) => (bytes, "B"),
    };
    format!("{value}{name}")
}

/// Formats nanoseconds compactly with three significant digits.
pub fn format_duration_ns(ns: u64) -> String {
    let v = ns as f64;
    if ns < 1_000 {
        format!("{ns}ns")
    } else if ns < 1_000_000 {
        trim(format!("{:.3}", v / 1e3)) + "us"
    } else if ns < 1_000_000_000 {
        trim(format!("{:.3}", v / 1e6)) + "ms"
    } else {
        trim(format!("{:.3}", v / 1e9)) + "s"
    }
}

fn trim(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_runtime_reads_as_fio_reads_it_a_bare_number_is_seconds() {
        assert_eq!(parse_runtime_ns("60"), Ok(60_000_000_000));
        assert_eq!(parse_runtime_ns("2m"), Ok(120_000_000_000));
        assert_eq!(parse_runtime_ns("500ms"), Ok(500_000_000));
        assert_eq!(parse_runtime_ns("1.5s"), Ok(1_500_000_000));
        assert!(parse_runtime_ns("soon").is_err());
        assert!(parse_runtime_ns("99999999999999999999").is_err());
    }

    #[test]
    fn sizes_print_in_the_unit_they_were_given_in() {
        // A decimal size stays decimal: a 32GB drive is not 31250000KiB.
        assert_eq!(format_size(parse_size("32GB").unwrap()), "32GB");
        assert_eq!(format_size(parse_size("80 GB").unwrap()), "80GB");
        assert_eq!(format_size(parse_size("500MB").unwrap()), "500MB");
        assert_eq!(format_size(parse_size("2TB").unwrap()), "2TB");
        // Binary sizes, and sizes that are both (1 TB is not; 2^20 x 10^6 is).
        assert_eq!(format_size(parse_size("4GiB").unwrap()), "4GiB");
        assert_eq!(format_size(parse_size("32KiB").unwrap()), "32KiB");
        assert_eq!(format_size(512_000), "500KiB"); // a tie: binary
        assert_eq!(format_size(1000), "1000B");
        assert_eq!(format_size(4097), "4097B");
        assert_eq!(format_size(0), "0B");
    }

    fn size(text: &str, expected: u64) {
        assert_eq!(parse_size(text), Ok(expected), "{text}");
    }

    #[test]
    fn sizes() {
        size("4096", 4096);
        // Lifetime-write ratings: decimal petabytes, and the binary unit.
        size("2PB", 2_000_000_000_000_000);
        size("1PiB", 1 << 50);
        size("32K", 32768);
        size("32KiB", 32768);
        size("32kb", 32_000);
        size("1GB", 1_000_000_000);
        size("1GiB", 1 << 30);
        size("80 GB", 80_000_000_000);
        size("1G", 1 << 30);
        size("1.5MiB", 3 << 19);
        size("8s", 4096);
        size("1_000", 1000);
        size("2PiB", 2 << 50);
        size("2P", 2 << 50);
        size("3PB", 3_000_000_000_000_000);
        // 16384 PiB is 2^64: one past the largest byte count.
        assert!(parse_size("16384PiB")
            .unwrap_err()
            .to_string()
            .contains("too large"));
        // The same in decimal: the float product rounds to 2^64, never
        // clamped to u64::MAX.
        assert!(parse_size("16384.0PiB")
            .unwrap_err()
            .to_string()
            .contains("too large"));
        assert!(parse_size("12 parsecs")
            .unwrap_err()
            .to_string()
            .contains("unknown size unit"));
        assert!(parse_size("KiB").is_err());
        assert!(parse_size("0.3K").is_err());
        assert!(parse_size("18446744073709551616").is_err());
        assert!(parse_size("17179869184GiB")
            .unwrap_err()
            .to_string()
            .contains("too large"));
        // A huge input is quoted, not echoed.
        let long = "9".repeat(1_000_000) + "X";
        assert!(parse_size(&long).unwrap_err().to_string().len() < 200);
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ns("100us"), Ok(100_000));
        assert_eq!(parse_duration_ns("0.1ms"), Ok(100_000));
        assert_eq!(parse_duration_ns("2s"), Ok(2_000_000_000));
        assert_eq!(parse_duration_ns("5ns"), Ok(5));
        assert!(parse_duration_ns("100")
            .unwrap_err()
            .to_string()
            .contains("needs a time unit"));
    }

    #[test]
    fn formatting() {
        assert_eq!(format_size(32768), "32KiB");
        assert_eq!(format_size(1 << 30), "1GiB");
        assert_eq!(format_size(1000), "1000B");
        assert_eq!(format_duration_ns(1500), "1.5us");
        assert_eq!(format_duration_ns(2_000_000), "2ms");
        assert_eq!(format_duration_ns(250), "250ns");
    }
}
