//! Small text helpers shared by the renderers: units, dates, escaping.

pub use flashlab_pattern::units::{format_duration_ns, format_size};

/// A duration given as a float (means), rounded to whole nanoseconds.
pub fn dur_f(ns: f64) -> String {
    if ns.is_finite() && ns >= 0.0 {
        format_duration_ns(ns.round() as u64)
    } else {
        "-".into()
    }
}

/// Bytes in binary units with up to one decimal ("1.5GiB"), exact units when
/// possible: a size that is a whole number of a binary or a decimal unit
/// prints as [`format_size`] does (a `capacity=8GB` device is "8GB", not
/// "7.5GiB"); only a plain byte count of a KiB or more is rounded.
pub fn bytes_approx(bytes: u64) -> String {
    let exact = format_size(bytes);
    // format_size falls back to "<digits>B" when no unit divides exactly.
    let plain_bytes = exact
        .strip_suffix('B')
        .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit()));
    if !plain_bytes || bytes < 1024 {
        return exact;
    }
    const UNITS: [(&str, u64); 4] = [
        ("TiB", 1 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ];
    for (name, unit) in UNITS {
        if bytes >= unit {
            return format!("{:.1}{name}", bytes as f64 / unit as f64);
        }
    }
    exact
}

/// Counts with thousands separators: 20000000 -> "20,000,000".
pub fn count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Seconds since the Unix epoch as `YYYY-MM-DD HH:MM:SS UTC` (no time-zone
/// database needed, and the same output on every machine).
pub fn utc(unix_s: u64) -> String {
    flashlab_results::time::utc(unix_s)
}

/// Escapes text for HTML element content and attribute values. "://" and
/// "//" are broken up as well (with character references, which display the
/// same), so that no URL can appear in a report even when a device name or
/// command line contains one: the page must never look like it loads
/// anything, and a test checks that by searching it for "http:" and "//".
pub fn html(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    if out.contains("//") {
        out = out.replace("://", "&#58;//").replace("//", "/&#47;");
    }
    out
}

/// Escapes a Markdown table cell (pipes and line breaks would end the cell).
pub fn md_cell(s: &str) -> String {
    // A code span shows its text as is (no HTML inside it runs): only the
    // table's own syntax is escaped there.
    let code =
        s.len() >= 2 && s.starts_with('`') && s.ends_with('`') && !s[1..s.len() - 1].contains('`');
    let s = if code { s.to_string() } else { md_text(s) };
    s.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\n', '\r'], " ")
}

/// Text for Markdown prose: the angle brackets as entities, so a device
/// name, note or title holding markup (`<script>`, `<img onerror=...>`) is
/// shown as text by every Markdown renderer, never passed through as raw
/// HTML (no tag starts without a `<`; an `&` only ever makes text).
pub fn md_text(s: &str) -> String {
    s.replace('<', "&lt;").replace('>', "&gt;")
}

/// A command line as a shell would read it back (arguments with special
/// characters single-quoted).
pub fn shell_join(args: &[String]) -> String {
    args.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A string made safe for an HTML id: lowercase letters, digits and dashes.
pub fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approximate_sizes_round_only_what_no_unit_divides() {
        assert_eq!(bytes_approx(8_000_000_000), "8GB");
        assert_eq!(bytes_approx(4 << 30), "4GiB");
        assert_eq!(bytes_approx(3 << 29), "1536MiB");
        assert_eq!(bytes_approx((1 << 30) + 1), "1.0GiB");
        assert_eq!(bytes_approx(1000), "1000B");
    }

    #[test]
    fn dates() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc(1_795_291_749), "2026-11-21 20:09:09 UTC");
    }

    #[test]
    fn counts_and_escapes() {
        assert_eq!(count(20_000_000), "20,000,000");
        assert_eq!(count(999), "999");
        assert_eq!(
            html("<a href='http://x'>"),
            "&lt;a href=&#39;http&#58;/&#47;x&#39;&gt;"
        );
        assert_eq!(shell_join(&["run".into(), "a b".into()]), "run 'a b'");
        assert_eq!(slug("RW pause/1ms"), "rw-pause-1ms");
    }
}
