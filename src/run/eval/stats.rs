//! The statistics of a paired comparison of two eval runs, chosen for few trials and few
//! tasks: an exact two-sided binomial test (McNemar's exact test on the tasks whose verdict
//! flipped, and the sign test on the tasks whose success rate moved), and a paired t
//! interval for the mean per-task success-rate delta. No approximation that needs large
//! counts: an eval set often has 10 tasks of 3 trials.

/// The sum of `values`, starting from +0. std's float `sum` starts from −0 (so that a sum of
/// −0 values stays −0), which prints an empty sum as `-0.0`.
pub fn sum(values: impl Iterator<Item = f64>) -> f64 {
    values.fold(0.0, |a, b| a + b)
}

/// Two-sided exact binomial test of `k` successes out of `n` at p = 1/2: the probability of
/// a split at least as uneven as `k : n - k` in either direction. McNemar's exact test with
/// `k` = tasks that got better and `n - k` = tasks that got worse (ties dropped) is this
/// test; so is the sign test. `n = 0` (nothing changed) gives 1.
///
/// Computed in log space, so `n` in the tens of thousands neither underflows nor
/// overflows: O(min(k, n-k)).
pub fn binomial_two_sided(k: u64, n: u64) -> f64 {
    let k = k.min(n);
    let small = k.min(n - k);
    if n == 0 || 2 * small == n {
        return 1.0;
    }
    // ln P(X = i) for i = 0..=small, by the ratio C(n, i) / C(n, i-1) = (n-i+1)/i.
    let ln_half_n = -(n as f64) * std::f64::consts::LN_2;
    let mut logs = Vec::with_capacity(small as usize + 1);
    let mut ln_choose = 0.0f64;
    logs.push(ln_half_n);
    for i in 1..=small {
        ln_choose += ((n - i + 1) as f64).ln() - (i as f64).ln();
        logs.push(ln_choose + ln_half_n);
    }
    let max = logs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let tail = max.exp() * logs.iter().map(|l| (l - max).exp()).sum::<f64>();
    (2.0 * tail).min(1.0)
}

/// A two-sided 95% confidence interval of a mean.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

/// The paired t interval (95%, two-sided) of the mean of `diffs`: mean ± t(0.975, n-1) ·
/// s / √n with the sample standard deviation s. `None` below two values (no spread to
/// estimate). The t quantile rather than the normal one keeps the interval honest for a
/// handful of tasks.
pub fn paired_t_interval(diffs: &[f64]) -> Option<Interval> {
    let n = diffs.len();
    if n < 2 {
        return None;
    }
    let mean = diffs.iter().sum::<f64>() / n as f64;
    let var = diffs.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let half = t_975(n as u64 - 1) * (var / n as f64).sqrt();
    Some(Interval {
        low: mean - half,
        high: mean + half,
    })
}

/// The 0.975 quantile of Student's t with `df` degrees of freedom (`df` ≥ 1): the table
/// value up to 30, then interpolated in 1/df between 30, 40, 60, 120 and ∞ (the usual
/// textbook rule; error below 0.001).
pub fn t_975(df: u64) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    const TAIL: [(f64, f64); 5] = [
        (30.0, 2.042),
        (40.0, 2.021),
        (60.0, 2.000),
        (120.0, 1.980),
        (f64::INFINITY, 1.960),
    ];
    let df = df.max(1);
    if df <= 30 {
        return TABLE[df as usize - 1];
    }
    let x = 1.0 / df as f64;
    for pair in TAIL.windows(2) {
        let ((d0, t0), (d1, t1)) = (pair[0], pair[1]);
        if (df as f64) <= d1 {
            let (x0, x1) = (1.0 / d0, 1.0 / d1);
            return t0 + (t1 - t0) * (x - x0) / (x1 - x0);
        }
    }
    1.960
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, eps: f64) -> bool {
        (a - b).abs() < eps
    }

    #[test]
    fn binomial_matches_hand_computed_values() {
        // 0 of 5: 2 · (1/32) = 0.0625.
        assert!(close(binomial_two_sided(0, 5), 0.0625, 1e-12));
        assert!(close(binomial_two_sided(5, 5), 0.0625, 1e-12));
        // 1 of 6: 2 · (1 + 6) / 64 = 0.21875.
        assert!(close(binomial_two_sided(1, 6), 0.21875, 1e-12));
        // 2 of 10: 2 · (1 + 10 + 45) / 1024 = 0.109375.
        assert!(close(binomial_two_sided(2, 10), 0.109375, 1e-12));
        // 0 of 1: 1 (capped).
        assert_eq!(binomial_two_sided(0, 1), 1.0);
        // Ties and nothing changed: 1.
        assert_eq!(binomial_two_sided(3, 6), 1.0);
        assert_eq!(binomial_two_sided(0, 0), 1.0);
        // 7 of 8 regressed: 2 · (1 + 8) / 256 = 0.0703125 (not significant at 5%).
        assert!(close(binomial_two_sided(1, 8), 0.0703125, 1e-12));
        // 0 of 8: 2/256 = 0.0078125.
        assert!(close(binomial_two_sided(0, 8), 0.0078125, 1e-12));
    }

    #[test]
    fn binomial_is_stable_for_large_n() {
        // 0 of 20,000: far below f64's smallest normal, but no NaN and no panic.
        let p = binomial_two_sided(0, 20_000);
        assert!((0.0..1e-300).contains(&p), "{p}");
        // A fair split of 10,000 (4,950 of 10,000): p ≈ 0.3222 (normal approximation with
        // continuity correction: z = 0.99, 2·(1-Φ(0.99)) = 0.3222).
        let p = binomial_two_sided(4_950, 10_000);
        assert!(close(p, 0.3222, 0.002), "{p}");
    }

    #[test]
    fn t_quantiles_match_the_table() {
        assert_eq!(t_975(1), 12.706);
        assert_eq!(t_975(10), 2.228);
        assert_eq!(t_975(30), 2.042);
        assert!(close(t_975(40), 2.021, 1e-9));
        assert!(close(t_975(60), 2.000, 1e-9));
        assert!(close(t_975(120), 1.980, 1e-9));
        // t(0.975, 50) = 2.009 (table), t(0.975, 1000) = 1.962.
        assert!(close(t_975(50), 2.009, 0.001), "{}", t_975(50));
        assert!(close(t_975(1000), 1.962, 0.001), "{}", t_975(1000));
    }

    #[test]
    fn paired_t_interval_matches_a_hand_computed_one() {
        // diffs 0, 0, -1, -1: mean -0.5, s = 0.57735, se = 0.288675, t(3) = 3.182:
        // -0.5 ± 0.918565.
        let i = paired_t_interval(&[0.0, 0.0, -1.0, -1.0]).unwrap();
        assert!(close(i.low, -1.418565, 1e-5), "{i:?}");
        assert!(close(i.high, 0.418565, 1e-5), "{i:?}");
        // No spread: a point.
        let i = paired_t_interval(&[0.2, 0.2, 0.2]).unwrap();
        assert!(close(i.low, 0.2, 1e-12) && close(i.high, 0.2, 1e-12));
        assert_eq!(paired_t_interval(&[0.5]), None);
    }
}
