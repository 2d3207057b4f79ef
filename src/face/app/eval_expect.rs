//! `mcpspec eval expect RESULTS.json`: the calls a run's model made, as expectations to
//! review (see [`crate::run::eval::expect`]). Exit 0, or 2 when the file cannot be read.

use crate::face::cli::{EvalExpectArgs, exit};

pub fn eval_expect(args: EvalExpectArgs) -> i32 {
    let input = match super::eval_compare::read(&args.results) {
        Ok(i) => i,
        Err(e) => {
            errln!("{}", e.render());
            return exit::INVALID_INPUT;
        }
    };
    let picked =
        match super::eval_compare::pick_run(input, &args.results, "run", args.model.as_deref()) {
            Ok(p) => p,
            Err(e) => {
                errln!("error: {e}");
                return exit::INVALID_INPUT;
            }
        };
    let text = crate::run::eval::expect::expectations(&picked.run, &picked.label);
    match &args.output {
        Some(path) => match super::report_files::write_reports_file(path, text) {
            Ok(()) => exit::OK,
            Err(code) => code,
        },
        None => {
            out!("{text}");
            exit::OK
        }
    }
}
