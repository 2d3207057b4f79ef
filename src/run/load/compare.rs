//! `mcpspec load compare`: two load reports (JSON), the whole run and each step side by
//! side — percentiles, error rates — and whether the candidate's latency distribution is
//! significantly slower than the base's (a Mann-Whitney U test on the recorded
//! histograms, not a ratio of two numbers).

use serde::Serialize;
use serde_json::Value;

/// A change is significant below this two-sided p-value.
pub const ALPHA: f64 = 0.05;

/// One part of both runs (the whole run, or a step) compared.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    /// `the run`, or `scenario / step`.
    pub name: String,
    pub base_p50_ms: Option<f64>,
    pub candidate_p50_ms: Option<f64>,
    pub base_p99_ms: Option<f64>,
    pub candidate_p99_ms: Option<f64>,
    /// Percent change of the candidate over the base.
    pub p50_change: Option<f64>,
    pub p99_change: Option<f64>,
    pub base_error_rate: f64,
    pub candidate_error_rate: f64,
    /// Two-sided p-value of the Mann-Whitney U test; `None`: too few values.
    pub p_value: Option<f64>,
    /// The candidate's values tend to be the larger (U above its mean).
    pub slower: bool,
    pub regressed: bool,
    /// Why it regressed.
    pub why: Vec<String>,
}

/// The Mann-Whitney U test of two histograms (`[value, count]` ascending): `(z, p)`, z > 0
/// when `b`'s values tend to be larger; ties get their average rank (and the variance its
/// correction). `None` when either side is empty or every value is the same.
pub fn mann_whitney(a: &[[u64; 2]], b: &[[u64; 2]]) -> Option<(f64, f64)> {
    let n1: f64 = a.iter().map(|[_, c]| *c as f64).sum();
    let n2: f64 = b.iter().map(|[_, c]| *c as f64).sum();
    if n1 == 0.0 || n2 == 0.0 {
        return None;
    }
    let n = n1 + n2;
    let (mut i, mut j) = (0, 0);
    let mut rank = 0.0; // values ranked so far
    let mut rank_sum_b = 0.0;
    let mut ties = 0.0;
    while i < a.len() || j < b.len() {
        let v = match (a.get(i), b.get(j)) {
            (Some([va, _]), Some([vb, _])) => (*va).min(*vb),
            (Some([va, _]), None) => *va,
            (None, Some([vb, _])) => *vb,
            (None, None) => unreachable!(),
        };
        let take = |h: &[[u64; 2]], k: &mut usize| match h.get(*k) {
            Some([x, c]) if *x == v => {
                *k += 1;
                *c as f64
            }
            _ => 0.0,
        };
        let ca = take(a, &mut i);
        let cb = take(b, &mut j);
        let t = ca + cb;
        // Ranks rank+1 ..= rank+t, on average:
        let average = rank + (t + 1.0) / 2.0;
        rank_sum_b += cb * average;
        ties += t * t * t - t;
        rank += t;
    }
    let u = rank_sum_b - n2 * (n2 + 1.0) / 2.0;
    let mean = n1 * n2 / 2.0;
    let variance = n1 * n2 / 12.0 * ((n + 1.0) - ties / (n * (n - 1.0)).max(1.0));
    if variance <= 0.0 {
        return None;
    }
    let z = (u - mean) / variance.sqrt();
    Some((z, erfc(z.abs() / std::f64::consts::SQRT_2)))
}

/// The complementary error function (Numerical Recipes' erfcc: relative error < 1.2e-7).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

/// What a report says of one part: p50, p99, error rate and histogram.
struct Side {
    p50: Option<f64>,
    p99: Option<f64>,
    error_rate: f64,
    histogram: Vec<[u64; 2]>,
}

fn side(v: &Value, error_rate: f64) -> Side {
    Side {
        p50: v["latency"]["p50Ms"].as_f64(),
        p99: v["latency"]["p99Ms"].as_f64(),
        error_rate,
        histogram: serde_json::from_value(v["histogram"].clone()).unwrap_or_default(),
    }
}

/// The parts of a report: the whole run, then each step.
fn parts(report: &Value) -> Result<Vec<(String, Side)>, String> {
    let summary = report
        .get("summary")
        .filter(|s| s.get("histogram").is_some())
        .ok_or("not a load report with histograms (`mcpspec load --json`)")?;
    let mut out = vec![(
        "the run".to_string(),
        side(summary, summary["errorRate"].as_f64().unwrap_or(0.0)),
    )];
    for step in summary["steps"].as_array().into_iter().flatten() {
        let requests = step["requests"].as_f64().unwrap_or(0.0);
        let errors = step["errors"].as_f64().unwrap_or(0.0);
        let rate = if requests > 0.0 {
            100.0 * errors / requests
        } else {
            0.0
        };
        out.push((
            format!(
                "{} / {}",
                step["scenario"].as_str().unwrap_or(""),
                step["step"].as_str().unwrap_or("")
            ),
            side(step, rate),
        ));
    }
    Ok(out)
}

fn change(base: Option<f64>, candidate: Option<f64>) -> Option<f64> {
    match (base, candidate) {
        (Some(b), Some(c)) if b > 0.0 => Some(100.0 * (c - b) / b),
        _ => None,
    }
}

/// Compare `candidate` with `base`: a part regressed when its p50 or p99 grew by more
/// than `tolerance` percent and its distribution is significantly slower, or its error
/// rate grew by more than `error_tolerance` percentage points. Parts in one report only
/// are left out.
pub fn compare(
    base: &Value,
    candidate: &Value,
    tolerance: f64,
    error_tolerance: f64,
) -> Result<Vec<Change>, String> {
    let base = parts(base).map_err(|e| format!("the base: {e}"))?;
    let candidate = parts(candidate).map_err(|e| format!("the candidate: {e}"))?;
    let mut out = Vec::new();
    for (name, b) in &base {
        let Some((_, c)) = candidate.iter().find(|(n, _)| n == name) else {
            continue;
        };
        let test = mann_whitney(&b.histogram, &c.histogram);
        let slower = test.is_some_and(|(z, _)| z > 0.0);
        let significant = test.is_some_and(|(z, p)| z > 0.0 && p < ALPHA);
        let (p50_change, p99_change) = (change(b.p50, c.p50), change(b.p99, c.p99));
        let mut why = Vec::new();
        for (label, delta) in [("p50", p50_change), ("p99", p99_change)] {
            if let Some(d) = delta.filter(|d| *d > tolerance)
                && significant
            {
                why.push(format!(
                    "{label} {d:+.1}% (over {tolerance}%), significant (p = {:.4})",
                    test.map_or(1.0, |t| t.1)
                ));
            }
        }
        let errors = c.error_rate - b.error_rate;
        if errors > error_tolerance {
            why.push(format!(
                "error rate {:.2}% → {:.2}% (+{errors:.2} points, over {error_tolerance})",
                b.error_rate, c.error_rate
            ));
        }
        out.push(Change {
            name: name.clone(),
            base_p50_ms: b.p50,
            candidate_p50_ms: c.p50,
            base_p99_ms: b.p99,
            candidate_p99_ms: c.p99,
            p50_change,
            p99_change,
            base_error_rate: b.error_rate,
            candidate_error_rate: c.error_rate,
            p_value: test.map(|t| t.1),
            slower,
            regressed: !why.is_empty(),
            why,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mann_whitney_sees_a_shift_and_not_the_same_distribution() {
        let a: Vec<[u64; 2]> = (100..120).map(|v| [v, 1]).collect();
        let b: Vec<[u64; 2]> = (110..130).map(|v| [v, 1]).collect();
        let (z, p) = mann_whitney(&a, &b).unwrap();
        assert!(z > 0.0 && p < 0.05, "{z} {p}");
        let (z, p) = mann_whitney(&a, &a).unwrap();
        assert!(z.abs() < 1e-9 && p > 0.99, "{z} {p}");
        // U = 0 of 20×20, against the normal approximation's p of some 5e-8.
        let c: Vec<[u64; 2]> = (200..220).map(|v| [v, 1]).collect();
        let (_, p) = mann_whitney(&a, &c).unwrap();
        assert!(p < 1e-6, "{p}");
        assert!((erfc(0.0) - 1.0).abs() < 1e-7);
        assert!((erfc(1.0) - 0.157_299_2).abs() < 1e-6);
    }
}
