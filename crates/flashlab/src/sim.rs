//! `flashlab sim`: the simulator's profiles.

use crate::cli::SimCommand;
use crate::error::{CliError, CliResult};

pub fn sim(cmd: SimCommand) -> CliResult<()> {
    match cmd {
        SimCommand::Profiles => {
            let profiles = flashlab_sim::profiles();
            let width = profiles.iter().map(|p| p.name.len()).max().unwrap_or(0);
            for p in profiles {
                println!("{:<width$}  {}", p.name, p.description);
            }
            println!("\nUse one with --device sim:NAME; `flashlab sim show NAME` prints it as TOML to edit into your own.");
            Ok(())
        }
        SimCommand::Show {
            profile, output, ..
        } => {
            let text = flashlab_sim::profile_toml(&profile).map_err(CliError::user)?;
            match output {
                Some(path) => std::fs::write(&path, text).map_err(|e| {
                    CliError::failure(format!("cannot write {}: {e}", path.display()))
                }),
                None => {
                    print!("{text}");
                    Ok(())
                }
            }
        }
    }
}
