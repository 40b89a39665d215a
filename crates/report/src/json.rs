//! The report model as JSON (`format: "flashlab-report/1"`).
//!
//! Pretty-printed, except that arrays of plain values stay on one line: the
//! chart data (time-series buckets `[first, count, min_ns, max_ns, mean_ns]`,
//! CDF points `[latency_ns, fraction]`, histogram edges and counts) would
//! otherwise take one line per number.

use std::fmt::Write;

use serde_json::Value;

use crate::model::Report;

pub fn render(r: &Report) -> String {
    // Serializing our own plain structs cannot fail (no maps with non-string keys).
    let v = serde_json::to_value(r).unwrap_or(Value::Null);
    let mut out = String::new();
    write_value(&mut out, &v, 0);
    out.push('\n');
    out
}

fn is_scalar(v: &Value) -> bool {
    !matches!(v, Value::Array(_) | Value::Object(_))
}

fn compact(v: &Value) -> bool {
    match v {
        Value::Array(a) => a.iter().all(is_scalar),
        Value::Object(m) => m.is_empty(),
        _ => true,
    }
}

fn write_value(out: &mut String, v: &Value, indent: usize) {
    match v {
        Value::Array(a) if !a.is_empty() && !compact(v) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                out.push_str(if i == 0 { "\n" } else { ",\n" });
                pad(out, indent + 1);
                write_value(out, x, indent + 1);
            }
            out.push('\n');
            pad(out, indent);
            out.push(']');
        }
        Value::Object(m) if !m.is_empty() => {
            out.push('{');
            // Sorted keys: the same output whether or not some other crate in
            // the build turns on serde_json's `preserve_order`.
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            for (i, k) in keys.into_iter().enumerate() {
                let x = &m[k];
                out.push_str(if i == 0 { "\n" } else { ",\n" });
                pad(out, indent + 1);
                let _ = write!(out, "{}: ", Value::String(k.clone()));
                write_value(out, x, indent + 1);
            }
            out.push('\n');
            pad(out, indent);
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let _ = write!(out, "{x}");
            }
            out.push(']');
        }
        _ => {
            let _ = write!(out, "{v}");
        }
    }
}

fn pad(out: &mut String, indent: usize) {
    for _ in 0..indent {
        out.push_str("  ");
    }
}
