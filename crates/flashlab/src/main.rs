//! `flashlab`: the command-line tool. Only glue: parsing (cli), the commands
//! (run, export/show, sim) and their output; everything else is in the
//! library crates under `crates/`.

mod cli;
mod error;
mod eta;
mod export;
mod oltp;
mod output;
mod probe;
mod replay;
mod report;
mod run;
mod serve;
mod signals;
mod sim;
mod suite;
mod suite_oltp;
mod sweep;
mod target;
mod twin;
mod validate;

use std::process::ExitCode;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::Parser;

use cli::{Cli, Command};
use error::{CliError, EXIT_USER};

fn main() -> ExitCode {
    quiet_on_broken_pipe();
    let mut cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_error(e),
    };
    cli::take_old_output(&mut cli.command);
    let result = match cli.command {
        Command::Run(args) => run::run(args),
        Command::Replay(args) => replay::replay_cmd(args),
        Command::Export(args) => export::export(args),
        Command::Show(args) => export::show(args),
        Command::Suite(args) => suite::suite(args.suite),
        Command::Sim(args) => sim::sim(args.command),
        Command::Report(args) => report::report(args),
        Command::Serve(args) => serve::serve(args),
        Command::Validate(args) => validate::validate(args),
        Command::Sweep(args) => sweep::sweep(args),
        Command::Oltp(args) => oltp::oltp(args),
        Command::Probe(args) => probe::probe(args),
        Command::Twin(args) => twin::twin(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of our output went away (`| head`): stop quietly.
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code)
        }
    }
}

/// `flashlab ... | head -1`: when the reader of stdout goes away, stop at
/// once and exit 0 without a word, as ripgrep does. Rust ignores SIGPIPE, so
/// a closed pipe shows up as an EPIPE error from a write: commands that
/// write through `io::Write` turn it into `CliError::broken_pipe` (CSV
/// export), and `println!`, which panics on any write error, is caught
/// here, in the one place every command goes through. Other panics keep
/// the default report.
fn quiet_on_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let msg = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        if msg.starts_with("failed printing to stdout") && msg.contains("Broken pipe") {
            std::process::exit(0);
        }
        default(info)
    }));
}

/// Clap's errors span several lines (usage, tips); users get one line that
/// names the problem and the fix. Help and version print as usual.
fn clap_error(e: clap::Error) -> ExitCode {
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            return if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                ExitCode::from(EXIT_USER)
            } else {
                ExitCode::SUCCESS
            };
        }
        _ => {}
    }
    // fio's option names that flashlab does not take: say what to use.
    if e.kind() == ErrorKind::UnknownArgument {
        if let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg) {
            let name = arg.split('=').next().unwrap_or(arg);
            if let Some(hint) = flashlab_pattern::fio::hint(name) {
                eprintln!(
                    "error: {}",
                    CliError::user(format!(
                        "fio option '{name}' is not supported by flashlab; {hint}"
                    ))
                );
                return ExitCode::from(EXIT_USER);
            }
        }
    }
    let rendered = e.render().to_string();
    let mut first = rendered
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("invalid arguments")
        .trim_start_matches("error: ")
        .to_string();
    // Clap lists the missing arguments on the lines below its first: keep
    // them on the one line ("... not provided: --output <PROFILE.toml>").
    if e.kind() == ErrorKind::MissingRequiredArgument {
        if let Some(ContextValue::Strings(missing)) = e.get(ContextKind::InvalidArg) {
            first = format!("{}: {}", first.trim_end_matches(':'), missing.join(", "));
        }
    }
    // Clap lists close subcommands in no useful order ('sweeep' offers
    // 'serve' before 'sweep'): the nearest by edit distance comes first.
    let typed = match e
        .get(ContextKind::InvalidSubcommand)
        .or_else(|| e.get(ContextKind::InvalidArg))
    {
        Some(ContextValue::String(s)) => s.clone(),
        _ => String::new(),
    };
    let suggestion = e
        .get(ContextKind::SuggestedArg)
        .or_else(|| e.get(ContextKind::SuggestedSubcommand))
        .or_else(|| e.get(ContextKind::SuggestedValue))
        .and_then(|v| match v {
            ContextValue::String(s) => Some(s.clone()),
            ContextValue::Strings(v) => v
                .iter()
                .min_by_key(|c| strsim::osa_distance(&typed, c))
                .cloned(),
            _ => None,
        });
    let sub = std::env::args().nth(1).filter(|a| !a.starts_with('-'));
    // Each subcommand's errors point to its own help (every subcommand clap
    // knows, so a new one needs no list kept here).
    let help = match sub {
        Some(s)
            if <Cli as clap::CommandFactory>::command()
                .get_subcommands()
                .any(|c| c.get_name() == s) =>
        {
            format!("flashlab {s} --help")
        }
        _ => "flashlab --help".to_string(),
    };
    let msg = match suggestion {
        Some(s) => format!("{first}; did you mean '{s}'? (`{help}` lists every option)"),
        None => format!("{first}; `{help}` lists every option"),
    };
    eprintln!("error: {}", CliError::user(msg));
    ExitCode::from(EXIT_USER)
}
