//! How near two texts or two instants are, for the `similar`, `words` and date-time critics.

use super::MAX_SIMILAR_CHARS;

/// 1 − edit distance / length of the longer string, on lower-cased text with runs of white
/// space made one space and the ends trimmed; 1 for two empty strings.
pub fn similarity(a: &str, b: &str) -> f64 {
    let norm = |s: &str| -> String {
        let joined = s.split_whitespace().collect::<Vec<_>>().join(" ");
        joined
            .to_lowercase()
            .chars()
            .take(MAX_SIMILAR_CHARS)
            .collect()
    };
    let (a, b) = (norm(a), norm(b));
    let longer = a.chars().count().max(b.chars().count());
    if longer == 0 {
        return 1.0;
    }
    1.0 - strsim::osa_distance(&a, &b) as f64 / longer as f64
}

/// [`similarity`] of the two texts' words (lower-cased, without surrounding punctuation),
/// each side's words sorted: "weather Boston" and "Boston weather" score 1.
pub fn word_similarity(a: &str, b: &str) -> f64 {
    let words = |s: &str| -> String {
        let mut w: Vec<String> = s
            .split_whitespace()
            .map(|w| {
                w.trim_matches(|c: char| !c.is_alphanumeric())
                    .to_lowercase()
            })
            .filter(|w| !w.is_empty())
            .collect();
        w.sort();
        w.join(" ")
    };
    similarity(&words(a), &words(b))
}

/// An RFC 3339 date-time, a date-time without an offset (UTC), or a date (its midnight,
/// UTC).
pub fn parse_datetime(text: &str) -> Option<chrono::DateTime<chrono::Utc>> {
    let text = text.trim();
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(text) {
        return Some(t.with_timezone(&chrono::Utc));
    }
    for format in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M:%S%.f",
    ] {
        if let Ok(t) = chrono::NaiveDateTime::parse_from_str(text, format) {
            return Some(t.and_utc());
        }
    }
    chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc())
}

#[cfg(test)]
mod tests {
    use super::{similarity, word_similarity};

    #[test]
    fn similarity_ignores_case_and_spacing() {
        assert_eq!(similarity("Boston", "  boston "), 1.0);
        assert!((similarity("Bosto", "Boston") - 5.0 / 6.0).abs() < 1e-9);
        assert_eq!(similarity("", ""), 1.0);
        assert_eq!(similarity("abc", "xyz"), 0.0);
        // Long strings are compared without a quadratic table in memory.
        let long = "a".repeat(20_000);
        assert_eq!(similarity(&long, &long), 1.0);
    }

    #[test]
    fn word_similarity_ignores_word_order() {
        assert_eq!(word_similarity("weather Boston", "Boston, weather"), 1.0);
        assert!(similarity("weather Boston", "Boston weather") < 0.5);
        assert!(word_similarity("rain in Boston", "Boston snow") < 0.8);
    }
}
