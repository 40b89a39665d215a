//! `flashlab suite budilovsky11`. (to be written)

use clap::Args;

use crate::error::{CliError, CliResult};

#[derive(Args, Debug)]
pub struct Budilovsky11Args {}

pub fn run(_args: Budilovsky11Args) -> CliResult<()> {
    Err(CliError::failure("the budilovsky11 suite is not built yet"))
}
