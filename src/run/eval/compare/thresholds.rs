//! How much worse counts as a regression: the thresholds, and their values parsed from the
//! command line.

/// What counts as a regression. Percent limits on the rise of a mean per trial; `None`
/// disables that check.
#[derive(Debug, Clone, PartialEq)]
pub struct Thresholds {
    /// A task passes when its success rate is at least this (0..=1).
    pub pass_rate: f64,
    pub max_calls_increase: Option<f64>,
    pub max_tokens_increase: Option<f64>,
    pub max_tool_errors_increase: Option<f64>,
    /// Largest accepted drop of a task's mean judge score (0..=1).
    pub max_judge_drop: Option<f64>,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            pass_rate: 0.8,
            max_calls_increase: Some(25.0),
            max_tokens_increase: Some(25.0),
            max_tool_errors_increase: Some(25.0),
            max_judge_drop: Some(0.1),
        }
    }
}

/// Parse a percent limit: `25%`, `25`, `12.5%`, or `off` / `none` (no limit).
pub fn parse_percent(text: &str) -> Result<Option<f64>, String> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("off") || t.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    let n = t.strip_suffix('%').unwrap_or(t).trim();
    match n.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(Some(v)),
        _ => Err(format!(
            "`{text}`: expected a percentage such as `25%` (0 or more), or `off`"
        )),
    }
}

/// Parse a score limit (0 to 1: `0.1`), or `off` / `none`.
pub fn parse_score_limit(text: &str) -> Result<Option<f64>, String> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("off") || t.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    match t.parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(Some(v)),
        _ => Err(format!(
            "`{text}`: expected a score from 0 to 1 (`0.1`), or `off`"
        )),
    }
}

/// Parse a pass rate: `0.8`, or `80%`.
pub fn parse_rate(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|v| v / 100.0),
        None => t.parse::<f64>(),
    };
    match v {
        Ok(v) if (0.0..=1.0).contains(&v) && v > 0.0 => Ok(v),
        _ => Err(format!(
            "`{text}`: expected a rate above 0 and at most 1 (`0.8`) or a percentage (`80%`)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::{parse_percent, parse_rate};

    #[test]
    fn percent_limits_parse() {
        assert_eq!(parse_percent("25%"), Ok(Some(25.0)));
        assert_eq!(parse_percent("12.5"), Ok(Some(12.5)));
        assert_eq!(parse_percent("off"), Ok(None));
        assert!(parse_percent("-3%").is_err());
        assert!(parse_percent("lots").is_err());
        assert_eq!(parse_rate("80%"), Ok(0.8));
        assert_eq!(parse_rate("1"), Ok(1.0));
        assert!(parse_rate("0").is_err());
        assert!(parse_rate("1.5").is_err());
    }
}
