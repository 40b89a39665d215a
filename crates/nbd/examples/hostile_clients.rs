//! Hostile NBD clients against `flashlab serve`, with the server's peak
//! resident memory (VmHWM) under each attack (docs/serve.md, "Hostile
//! clients"):
//!
//! ```text
//! cargo build --release
//! cargo run --release -p flashlab-nbd --example hostile_clients -- \
//!     target/release/flashlab serve --profile ssd-m,capacity=1GiB
//! ```
//!
//! Every attack runs against a fresh server; the arguments are the server
//! command, to which `--data`, `--listen` and the limit flags are added.

fn main() {
    let server: Vec<String> = std::env::args().skip(1).collect();
    if server.is_empty() {
        eprintln!("usage: hostile_clients FLASHLAB serve --profile SPEC (e.g. target/release/flashlab serve --profile ssd-m,capacity=1GiB)");
        std::process::exit(2);
    }
    let dir = match tempfile_dir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    let r = flashlab_nbd::attacks::run_all(&server, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    match r {
        Ok(reports) => print!("{}", flashlab_nbd::attacks::table(&reports)),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}

fn tempfile_dir() -> std::io::Result<std::path::PathBuf> {
    let d = std::env::temp_dir().join(format!("flashlab-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&d)?;
    Ok(d)
}
