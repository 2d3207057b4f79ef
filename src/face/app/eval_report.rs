//! `mcpspec eval report RESULTS.json --html FILE`: the HTML page of a results file (see
//! [`crate::run::eval::report_html`]), every run of it. Exit 0, or 2 when the file cannot be
//! read or the page written.

use crate::face::cli::{EvalReportArgs, exit};

use super::eval_compare::Input;

pub fn eval_report(args: EvalReportArgs) -> i32 {
    let runs = match super::eval_compare::read(&args.results) {
        Ok(Input::One(run)) => vec![*run],
        Ok(Input::Several(runs)) => runs,
        Err(e) => {
            errln!("{}", e.render());
            return exit::INVALID_INPUT;
        }
    };
    let secrets = crate::ground::redact::known().values().to_vec();
    let page = crate::run::eval::report_html::to_html(&runs, &secrets);
    match super::report_files::write_reports_file(&args.html, page) {
        Ok(()) => exit::OK,
        Err(code) => code,
    }
}
