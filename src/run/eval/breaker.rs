//! The circuit breaker of a model client (`--max-api-failures`): model requests that fail
//! in a row (after their retries: a timeout, a 5xx, a 429, a stalled body) stop the whole
//! run with a clear reason instead of failing every remaining trial one timeout at a time.
//! A success closes it again. Shared by the workers of one client.

use std::sync::atomic::{AtomicU32, Ordering};

use super::conversation::ApiError;

#[derive(Debug)]
pub struct Breaker {
    max: u32,
    streak: AtomicU32,
}

impl Breaker {
    /// Opens after `max` failures in a row (at least 1).
    pub fn new(max: u32) -> Breaker {
        Breaker {
            max: max.max(1),
            streak: AtomicU32::new(0),
        }
    }

    pub fn max(&self) -> u32 {
        self.max
    }

    /// A request's outcome through the breaker: a trial-level failure that makes `max` in a
    /// row becomes the run-stopping [`ApiError::Limit`].
    pub fn pass<T>(&self, outcome: Result<T, ApiError>) -> Result<T, ApiError> {
        match outcome {
            Ok(v) => {
                self.streak.store(0, Ordering::SeqCst);
                Ok(v)
            }
            Err(ApiError::Failed(why)) => {
                let n = self.streak.fetch_add(1, Ordering::SeqCst) + 1;
                if n >= self.max {
                    Err(ApiError::Limit(format!(
                        "the run stopped: {n} model requests failed in a row (the circuit breaker, --max-api-failures {}); the last: {why}",
                        self.max
                    )))
                } else {
                    Err(ApiError::Failed(why))
                }
            }
            Err(other) => Err(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_after_max_failures_in_a_row_and_a_success_closes_it() {
        let b = Breaker::new(2);
        let fail = || Err::<(), _>(ApiError::Failed("timeout".into()));
        assert!(matches!(b.pass(fail()), Err(ApiError::Failed(_))));
        assert!(b.pass(Ok(())).is_ok());
        assert!(matches!(b.pass(fail()), Err(ApiError::Failed(_))));
        match b.pass(fail()) {
            Err(ApiError::Limit(m)) => assert!(m.contains("2 model requests failed in a row")),
            _ => panic!("the breaker should open"),
        }
    }
}
