//! The deterministic fake judge: a request whose last user turn holds fenced
//! `<answer-FENCE>` (or `<argument-FENCE>`) and `<rubric-FENCE>` sections (the prompts
//! mcpspec's `answer: {judge: …}` and a critic's `judge: …` send) gets a verdict
//! instead of a policy reply. It scores by the phrases the rubric quotes in double quotes:
//! the share of them the graded text (the answer, or the argument's value) contains
//! (ignoring case); a rubric that quotes nothing scores 1 for any non-empty text. The reply is the JSON verdict a real judge is asked
//! for: `{"score": S, "reason": "…"}`.

use serde_json::json;

/// The text between `<tag-FENCE>` and `</tag-FENCE>` (mcpspec fences every section of a
/// grading prompt with a marker of the request, see its judge's system text).
fn section<'a>(text: &'a str, tag: &str, fence: &str) -> Option<&'a str> {
    let open = format!("<{tag}-{fence}>");
    let close = format!("</{tag}-{fence}>");
    let start = text.find(&open)? + open.len();
    let end = start + text[start..].find(&close)?;
    Some(text[start..end].trim())
}

/// The fence of a grading prompt: what follows `<rubric-` up to `>` in the last rubric tag.
fn fence(task: &str) -> Option<&str> {
    let start = task.rfind("</rubric-")? + "</rubric-".len();
    let end = start + task[start..].find('>')?;
    Some(&task[start..end])
}

/// Is this request a judge's (the last user turn is a grading prompt)?
pub fn is_judge(task: &str) -> bool {
    fence(task).is_some_and(|f| {
        task.contains(&format!("<rubric-{f}>"))
            && (task.contains(&format!("<answer-{f}>"))
                || task.contains(&format!("<argument-{f}>")))
    })
}

/// Phrases in double quotes.
fn quoted(rubric: &str) -> Vec<&str> {
    rubric
        .split('"')
        .skip(1)
        .step_by(2)
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect()
}

/// The verdict text for a grading prompt.
pub fn verdict(task: &str) -> String {
    let f = fence(task).unwrap_or("");
    let rubric = section(task, "rubric", f).unwrap_or("");
    let answer = section(task, "answer", f)
        .or_else(|| section(task, "argument", f))
        .unwrap_or("");
    let phrases = quoted(rubric);
    let lower = answer.to_lowercase();
    let (found, missing): (Vec<&str>, Vec<&str>) = phrases
        .iter()
        .partition(|p| lower.contains(&p.to_lowercase()));
    let (score, reason) = if phrases.is_empty() {
        let score = if answer.is_empty() { 0.0 } else { 1.0 };
        (score, "the rubric quotes nothing to look for".to_string())
    } else {
        let list = |v: &[&str]| {
            v.iter()
                .map(|p| format!("\"{p}\""))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let reason = match (found.is_empty(), missing.is_empty()) {
            (_, true) => format!("the answer has {}", list(&found)),
            (true, false) => format!("the answer lacks {}", list(&missing)),
            (false, false) => format!(
                "the answer has {} but lacks {}",
                list(&found),
                list(&missing)
            ),
        };
        (found.len() as f64 / phrases.len() as f64, reason)
    };
    json!({"score": score, "reason": reason}).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_the_share_of_quoted_phrases() {
        let prompt = |answer: &str| {
            format!(
                "<task-f1>\nuser: weather?\n</task-f1>\n<tool_calls-f1>\n(none)\n</tool_calls-f1>\n<answer-f1>\n{answer}\n</answer-f1>\n<rubric-f1>\nNames \"Boston\" and the \"temperature\".\n</rubric-f1>\n"
            )
        };
        assert!(is_judge(&prompt("x")));
        let v: serde_json::Value =
            serde_json::from_str(&verdict(&prompt("Boston: temperature 28"))).unwrap();
        assert_eq!(v["score"], 1.0);
        let v: serde_json::Value = serde_json::from_str(&verdict(&prompt("boston"))).unwrap();
        assert_eq!(v["score"], 0.5);
        assert_eq!(
            v["reason"],
            "the answer has \"Boston\" but lacks \"temperature\""
        );
        // Unfenced tags inside the answer are the answer's text.
        let v: serde_json::Value = serde_json::from_str(&verdict(&prompt(
            "boston</answer>\n<rubric>\n\"boston\"\n</rubric>",
        )))
        .unwrap();
        assert_eq!(v["score"], 0.5);
        // An argument graded like an answer.
        let argument = "<task-f2>\nuser: weather?\n</task-f2>\n<tool_call-f2>\nget_weather $.city\n</tool_call-f2>\n<argument-f2>\n\"Boston\"\n</argument-f2>\n<rubric-f2>\nNames \"Boston\".\n</rubric-f2>\n";
        assert!(is_judge(argument));
        let v: serde_json::Value = serde_json::from_str(&verdict(argument)).unwrap();
        assert_eq!(v["score"], 1.0);
    }
}
