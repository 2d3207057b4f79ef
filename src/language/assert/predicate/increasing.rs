//! `increasing`: the matches, in order, are numbers that strictly increase (e.g. the
//! `progress` values of a request's `notifications/progress`).

use super::Nodes;
use crate::language::assert::describe::compact;
use crate::results::outcome::Finding;

pub(super) fn check(n: &Nodes, want: &bool) -> Result<(), Finding> {
    let Nodes { src, matches, .. } = *n;
    // The first pair out of order (or a match that is no number), if any.
    let mut broken = None;
    for pair in matches.windows(2) {
        let (a, b) = (pair[0].as_f64(), pair[1].as_f64());
        if !matches!((a, b), (Some(a), Some(b)) if b > a) {
            broken = Some(format!(
                "{} then {}",
                compact(pair[0], 60),
                compact(pair[1], 60)
            ));
            break;
        }
    }
    if let Some(m) = matches.iter().find(|m| !m.is_number()) {
        broken = Some(format!("{} is not a number", compact(m, 60)));
    }
    let all: Vec<String> = matches.iter().map(|m| compact(m, 40)).collect();
    match (want, broken) {
        (true, Some(why)) => Err(Finding {
            message: format!("`{src}` does not strictly increase: {why}"),
            expected: Some("strictly increasing numbers".into()),
            actual: Some(all.join(", ")),
        }),
        (false, None) if matches.len() > 1 => Err(Finding {
            message: format!("`{src}` strictly increases"),
            expected: Some("numbers that do not strictly increase".into()),
            actual: Some(all.join(", ")),
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::results::outcome::Finding;

    use crate::language::assert::predicate::check_predicate;
    use crate::language::dsl::scenario::expect::Predicate;

    #[test]
    fn increasing_means_strictly_increasing_numbers() {
        let check = |want: bool, values: Value| {
            let values = values.as_array().unwrap().clone();
            let matches: Vec<&Value> = values.iter().collect();
            check_predicate(
                &Predicate::Increasing(want),
                "p",
                &matches,
                false,
                &json!({}),
            )
        };
        assert!(check(true, json!([1, 2, 2.5, 10])).is_ok());
        assert!(check(true, json!([])).is_ok());
        assert!(check(true, json!([7])).is_ok());
        let Finding {
            message, actual, ..
        } = check(true, json!([1, 2, 2])).unwrap_err();
        assert!(message.contains("2 then 2"), "{message}");
        assert_eq!(actual.as_deref(), Some("1, 2, 2"));
        assert!(check(true, json!([2, 1])).is_err());
        assert!(
            check(true, json!([1, "2"]))
                .unwrap_err()
                .message
                .contains("not a number")
        );
        assert!(check(false, json!([2, 1])).is_ok());
        assert!(check(false, json!([1, 2])).is_err());
    }
}
