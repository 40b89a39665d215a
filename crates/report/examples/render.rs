//! Renders a report until the CLI has `flashlab report`:
//! `cargo run -p flashlab-report --example render -- [--format html|md|json] -o OUT DIR...`

use std::path::PathBuf;

fn main() {
    let mut args = std::env::args().skip(1);
    let mut format = flashlab_report::ReportFormat::Html;
    let mut out: Option<PathBuf> = None;
    let mut dirs = Vec::new();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--format" => match args
                .next()
                .map(|f| flashlab_report::ReportFormat::parse(&f))
            {
                Some(Ok(f)) => format = f,
                Some(Err(e)) => fail(&e.to_string()),
                None => fail("--format needs a value: html, md or json"),
            },
            "-o" => out = args.next().map(PathBuf::from),
            _ => dirs.push(PathBuf::from(a)),
        }
    }
    let t = std::time::Instant::now();
    match flashlab_report::render(&dirs, format) {
        Ok(text) => {
            match &out {
                Some(p) => std::fs::write(p, &text)
                    .unwrap_or_else(|e| fail(&format!("{}: {e}", p.display()))),
                None => print!("{text}"),
            }
            eprintln!(
                "rendered {} bytes in {:.2} s",
                text.len(),
                t.elapsed().as_secs_f64()
            );
        }
        Err(e) => fail(&e.to_string()),
    }
}

fn fail(msg: &str) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(2)
}
