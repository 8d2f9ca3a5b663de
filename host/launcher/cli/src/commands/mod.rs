//! One module per subcommand. Each takes its parsed arguments and returns
//! [`crate::failure::Result`]; none parses arguments or picks exit codes.

mod alone;
mod avail;
mod chain;
mod check;
mod demo;
mod kinds;
mod kit;
mod merge;
mod merge_check;
mod plugin;
mod replay;
mod run;
mod sdk;
mod shipping;
mod signing;
mod vet;

use crate::cli::{Command, PluginCommand, SdkCommand};
use crate::failure::Result;

pub fn dispatch(command: Command) -> Result {
    match command {
        Command::Run(args) => run::run(args),
        Command::Avail(args) => avail::avail(args),
        Command::Sdk(SdkCommand::Prefix { into }) => sdk::prefix(into.as_deref()),
        Command::Replay(args) => replay::replay(args),
        Command::Demo(args) => demo::demo(args),
        Command::Check(args) => check::check(args),
        Command::Kinds(args) => kinds::kinds(args),
        Command::Merge(args) => merge::merge(args),
        Command::WriteJournal { dir } => run::write_journal(&dir),
        Command::Plugin(PluginCommand::Inspect { file }) => plugin::inspect(&file),
        Command::Plugin(PluginCommand::Keygen { out }) => signing::keygen(&out),
        Command::Plugin(PluginCommand::Push {
            plain_http,
            file,
            reference,
        }) => shipping::push(&file, &reference, plain_http),
        Command::Plugin(PluginCommand::Pull {
            plain_http,
            sha256,
            out,
            reference,
        }) => shipping::pull(&reference, sha256.as_deref(), out.as_deref(), plain_http),
        Command::Plugin(PluginCommand::Sign { key, file }) => signing::sign(&key, &file),
        Command::Plugin(PluginCommand::Verify { public, file }) => signing::verify(&public, &file),
        Command::Plugin(PluginCommand::Vet {
            public,
            trace,
            config,
            file,
        }) => vet::vet(&file, &public, trace.as_deref(), &config),
        Command::Plugin(PluginCommand::Wit { out }) => kit::wit(&out),
        Command::Plugin(PluginCommand::New { name, lang, world }) => kit::new(&name, &lang, &world),
        Command::Plugin(PluginCommand::Build { dir }) => kit::build(dir.as_deref()),
        Command::Plugin(PluginCommand::Test {
            trace,
            config,
            expect,
            merge_seed,
            file,
        }) => kit::test(&file, &trace, &config, expect.as_deref(), merge_seed),
    }
}
