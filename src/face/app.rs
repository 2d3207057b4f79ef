//! What each command does: wiring CLI → dsl → engine → reports → exit code.
//!
//! The module root only dispatches: one file per command under `app/`, and what several
//! commands share in files of its own (`inputs`, `connect`, `report_files`, `runtime`,
//! `schema`).

mod auth;
mod call;
mod connect;
mod eval;
mod eval_compare;
mod eval_expect;
mod eval_judge;
mod eval_report;
pub mod init;
mod inputs;
mod list;
mod load;
mod load_html;
mod merge;
mod outputs;
mod pack;
mod progress;
pub mod record;
mod report_files;
mod run;
mod runtime;
pub mod schema;
mod snapshot;
mod validate;
mod watch;

use clap::Parser;

use crate::face::cli::{Cli, Command, exit};

use call::call;
use list::list;
use merge::merge;
use run::run;
use snapshot::{diff, snapshot};
use validate::validate;

pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    exit::OK
                }
                _ => exit::INVALID_INPUT,
            };
        }
    };
    match cli.command {
        Command::Schema { kind } => schema::print(kind),
        Command::Report {
            command:
                crate::face::cli::ReportCommand::Merge {
                    files,
                    junit,
                    junit_flavor,
                    json,
                    html,
                    sarif,
                    sarif_source,
                },
        } => merge(
            &files,
            &report_files::ReportPaths {
                junit,
                junit_flavor: junit_flavor.unwrap_or_default(),
                json,
                html,
                sarif,
                sarif_source,
            },
        ),
        Command::Init(args) => runtime::runtime().block_on(crate::face::app::init::init(args)),
        Command::Snapshot(args) => runtime::runtime().block_on(snapshot(args)),
        Command::Diff(args) => diff(args),
        Command::Validate {
            paths,
            format,
            offline,
        } => validate(&paths, format, offline),
        Command::List {
            paths,
            markdown,
            format,
            offline,
        } => list(&paths, markdown, format, offline),
        Command::Pack { command } => pack::main(command),
        Command::Run(args) if args.watch => watch::watch(args),
        Command::Run(args) => run(args),
        Command::Load(args) => load::load(args),
        Command::Call(args) => runtime::runtime().block_on(call(args)),
        Command::Eval { command } => eval::main(command),
        Command::Auth { command } => auth::main(command),
        Command::Record(args) => record::record(args),
    }
}
