//! The keyword rules: `type`, `enum`/`const`, `pattern`/`format`, numeric and count
//! bounds, `multipleOf`, `uniqueItems`, `additionalProperties`.

use std::cmp::Ordering;
use std::collections::BTreeSet;

use serde_json::{Map, Number, Value};

use super::{ALL_TYPES, Cx, join};
use crate::ground::json::{json_eq, num_cmp};
use crate::language::contract_rules::change_kind::ChangeKind;

impl Cx {
    pub(super) fn types(
        &mut self,
        path: &str,
        b: &Map<String, Value>,
        a: &Map<String, Value>,
        unknown: &mut BTreeSet<&str>,
    ) {
        let (bt, at) = (b.get("type"), a.get("type"));
        if opt_eq(bt, at) {
            return;
        }
        let (Some(old), Some(new)) = (type_set(bt), type_set(at)) else {
            unknown.insert("type");
            return;
        };
        let widened = covers(&new, &old);
        if widened && covers(&old, &new) {
            return; // same set of values, spelled differently
        }
        let kind = if widened && self.input() {
            ChangeKind::TypeWidened
        } else {
            ChangeKind::TypeChanged
        };
        self.emit(kind, join(path, "type"), bt.cloned(), at.cloned());
    }

    pub(super) fn enums(
        &mut self,
        path: &str,
        b: &Map<String, Value>,
        a: &Map<String, Value>,
        unknown: &mut BTreeSet<&str>,
    ) {
        let (be, ae) = (b.get("enum"), a.get("enum"));
        if opt_eq(be, ae) {
            return;
        }
        let p = join(path, "enum");
        match (be, ae) {
            (None, Some(_)) => self.emit(ChangeKind::EnumAdded, p, None, ae.cloned()),
            (Some(_), None) => self.emit(ChangeKind::EnumRemoved, p, be.cloned(), None),
            (Some(Value::Array(old)), Some(Value::Array(new))) => {
                let gone = old.iter().any(|v| !new.iter().any(|w| json_eq(v, w)));
                let came = new.iter().any(|v| !old.iter().any(|w| json_eq(v, w)));
                // A change that both drops and adds values is reported as both facets, so
                // that each direction sees the one that matters to it.
                if gone {
                    self.emit(
                        ChangeKind::EnumValuesRemoved,
                        p.clone(),
                        be.cloned(),
                        ae.cloned(),
                    );
                }
                if came {
                    self.emit(ChangeKind::EnumValuesAdded, p, be.cloned(), ae.cloned());
                }
            }
            _ => {
                unknown.insert("enum");
            }
        }
    }

    /// A keyword compared as added / changed / removed (`const`, `pattern`, `format`).
    pub(super) fn presence(
        &mut self,
        path: &str,
        b: &Map<String, Value>,
        a: &Map<String, Value>,
        key: &str,
        kinds: [ChangeKind; 3],
    ) {
        let (x, y) = (b.get(key), a.get(key));
        let kind = match (x, y) {
            (None, Some(_)) => kinds[0],
            (Some(x), Some(y)) if !json_eq(x, y) => kinds[1],
            (Some(_), None) => kinds[2],
            _ => return,
        };
        self.emit(kind, join(path, key), x.cloned(), y.cloned());
    }

    /// `maximum`/`exclusiveMaximum` (`upper`) or `minimum`/`exclusiveMinimum`: the pair is
    /// reduced to its effective bound first, so that moving a limit from one keyword to
    /// the other (or the draft-4 boolean `exclusiveMaximum`) is judged by its effect.
    pub(super) fn numeric_bound(
        &mut self,
        path: &str,
        b: &Map<String, Value>,
        a: &Map<String, Value>,
        (incl, excl): (&'static str, &'static str),
        upper: bool,
        unknown: &mut BTreeSet<&str>,
    ) {
        if opt_eq(b.get(incl), a.get(incl)) && opt_eq(b.get(excl), a.get(excl)) {
            return;
        }
        let (Some(old), Some(new)) = (
            effective_bound(b, incl, excl, upper),
            effective_bound(a, incl, excl, upper),
        ) else {
            unknown.insert(incl);
            unknown.insert(excl);
            return;
        };
        let (kind, key) = match (&old, &new) {
            (None, None) => return,
            (None, Some(n)) => (ChangeKind::BoundNarrowed, n.key),
            (Some(o), None) => (ChangeKind::BoundWidened, o.key),
            (Some(o), Some(n)) => match tighter(n, o, upper) {
                Ordering::Greater => (ChangeKind::BoundNarrowed, n.key),
                Ordering::Less => (ChangeKind::BoundWidened, n.key),
                Ordering::Equal => return,
            },
        };
        let num = |x: &Option<Bound>| x.as_ref().map(|x| Value::Number(x.value.clone()));
        self.emit(kind, join(path, key), num(&old), num(&new));
    }

    /// `maxLength`, `minItems`, ...: a non-negative count limit.
    pub(super) fn count_bound(
        &mut self,
        path: &str,
        b: &Map<String, Value>,
        a: &Map<String, Value>,
        key: &'static str,
        upper: bool,
        unknown: &mut BTreeSet<&str>,
    ) {
        let (x, y) = (b.get(key), a.get(key));
        if opt_eq(x, y) {
            return;
        }
        let narrowed = match (x, y) {
            (None, Some(Value::Number(_))) => true,
            (Some(Value::Number(_)), None) => false,
            (Some(Value::Number(o)), Some(Value::Number(n))) => match num_cmp(n, o) {
                Ordering::Equal => return,
                ord => (ord == Ordering::Less) == upper,
            },
            _ => {
                unknown.insert(key);
                return;
            }
        };
        let kind = if narrowed {
            ChangeKind::BoundNarrowed
        } else {
            ChangeKind::BoundWidened
        };
        self.emit(kind, join(path, key), x.cloned(), y.cloned());
    }

    pub(super) fn multiple_of(
        &mut self,
        path: &str,
        b: &Map<String, Value>,
        a: &Map<String, Value>,
        unknown: &mut BTreeSet<&str>,
    ) {
        let (x, y) = (b.get("multipleOf"), a.get("multipleOf"));
        if opt_eq(x, y) {
            return;
        }
        let (narrowed, widened) = match (step(x), step(y)) {
            (Some(None), Some(Some(_))) => (true, false),
            (Some(Some(_)), Some(None)) => (false, true),
            // every multiple of the old step is a multiple of the new one
            (Some(Some(o)), Some(Some(n))) if is_multiple(o, n) => (false, true),
            (Some(Some(o)), Some(Some(n))) if is_multiple(n, o) => (true, false),
            // incomparable steps (2 → 3): values are both lost and gained
            (Some(Some(_)), Some(Some(_))) => (true, true),
            _ => {
                unknown.insert("multipleOf");
                return;
            }
        };
        let p = join(path, "multipleOf");
        if narrowed {
            self.emit(ChangeKind::BoundNarrowed, p.clone(), x.cloned(), y.cloned());
        }
        if widened {
            self.emit(ChangeKind::BoundWidened, p, x.cloned(), y.cloned());
        }
    }

    pub(super) fn unique_items(
        &mut self,
        path: &str,
        b: &Map<String, Value>,
        a: &Map<String, Value>,
        unknown: &mut BTreeSet<&str>,
    ) {
        let (x, y) = (b.get("uniqueItems"), a.get("uniqueItems"));
        if opt_eq(x, y) {
            return;
        }
        let flag = |v: Option<&Value>| match v {
            None => Some(false),
            Some(Value::Bool(f)) => Some(*f),
            Some(_) => None,
        };
        match (flag(x), flag(y)) {
            (Some(false), Some(true)) => self.emit(
                ChangeKind::BoundNarrowed,
                join(path, "uniqueItems"),
                x.cloned(),
                y.cloned(),
            ),
            (Some(true), Some(false)) => self.emit(
                ChangeKind::BoundWidened,
                join(path, "uniqueItems"),
                x.cloned(),
                y.cloned(),
            ),
            (Some(_), Some(_)) => {} // absent vs false
            _ => {
                unknown.insert("uniqueItems");
            }
        }
    }

    /// `additionalProperties` / `unevaluatedProperties`.
    pub(super) fn additional(
        &mut self,
        path: &str,
        b: &Map<String, Value>,
        a: &Map<String, Value>,
        key: &'static str,
        unknown: &mut BTreeSet<&str>,
    ) {
        let (x, y) = (b.get(key), a.get(key));
        if opt_eq(x, y) {
            return;
        }
        let p = join(path, key);
        match (extra_state(x), extra_state(y)) {
            (Some(Extra::Open), Some(Extra::Open)) | (Some(Extra::Closed), Some(Extra::Closed)) => {
            }
            (Some(Extra::Schema), Some(Extra::Schema)) => {
                self.node(
                    &p,
                    x.unwrap_or(&Value::Bool(true)),
                    y.unwrap_or(&Value::Bool(true)),
                );
            }
            (Some(Extra::Open), Some(_)) | (Some(Extra::Schema), Some(Extra::Closed)) => {
                self.emit(
                    ChangeKind::AdditionalPropertiesRestricted,
                    p,
                    x.cloned(),
                    y.cloned(),
                );
            }
            (Some(_), Some(_)) => self.emit(
                ChangeKind::AdditionalPropertiesRelaxed,
                p,
                x.cloned(),
                y.cloned(),
            ),
            _ => {
                unknown.insert(key);
            }
        }
    }
}

/// The set of type names a `type` keyword admits; `None` inside when malformed.
pub(super) fn type_set(v: Option<&Value>) -> Option<BTreeSet<&str>> {
    match v {
        None => Some(ALL_TYPES.iter().copied().collect()),
        Some(Value::String(s)) => Some(BTreeSet::from([s.as_str()])),
        Some(Value::Array(xs)) => xs.iter().map(Value::as_str).collect(),
        Some(_) => None,
    }
}

/// Does `new` admit every value `old` admits? (`integer` ⊂ `number`.)
pub(super) fn covers(new: &BTreeSet<&str>, old: &BTreeSet<&str>) -> bool {
    old.iter()
        .all(|t| new.contains(t) || (*t == "integer" && new.contains("number")))
}

pub(super) enum Extra {
    /// absent, `true` or `{}`
    Open,
    /// `false`
    Closed,
    /// a constraining schema
    Schema,
}

pub(super) fn extra_state(v: Option<&Value>) -> Option<Extra> {
    match v {
        None | Some(Value::Bool(true)) => Some(Extra::Open),
        Some(Value::Bool(false)) => Some(Extra::Closed),
        Some(Value::Object(m)) if m.is_empty() => Some(Extra::Open),
        Some(Value::Object(_)) => Some(Extra::Schema),
        Some(_) => None,
    }
}

pub(super) struct Bound {
    value: Number,
    exclusive: bool,
    /// the keyword the limit comes from
    key: &'static str,
}

/// The effective limit of an inclusive/exclusive keyword pair; `None` inside when one
/// of them is malformed.
pub(super) fn effective_bound(
    m: &Map<String, Value>,
    incl: &'static str,
    excl: &'static str,
    upper: bool,
) -> Option<Option<Bound>> {
    let mut draft4_exclusive = false;
    let mut cands: Vec<Bound> = Vec::new();
    match m.get(excl) {
        None => {}
        Some(Value::Bool(f)) => draft4_exclusive = *f,
        Some(Value::Number(n)) => cands.push(Bound {
            value: n.clone(),
            exclusive: true,
            key: excl,
        }),
        Some(_) => return None,
    }
    match m.get(incl) {
        None => {}
        Some(Value::Number(n)) => cands.push(Bound {
            value: n.clone(),
            exclusive: draft4_exclusive,
            key: incl,
        }),
        Some(_) => return None,
    }
    Some(cands.into_iter().reduce(|x, y| {
        if tighter(&y, &x, upper) == Ordering::Greater {
            y
        } else {
            x
        }
    }))
}

/// `Greater` when `x` admits fewer values than `y`.
pub(super) fn tighter(x: &Bound, y: &Bound, upper: bool) -> Ordering {
    let by_value = if upper {
        num_cmp(&y.value, &x.value)
    } else {
        num_cmp(&x.value, &y.value)
    };
    by_value.then(x.exclusive.cmp(&y.exclusive))
}

/// A `multipleOf` value: absent, a positive number, or malformed (`None`).
pub(super) fn step(v: Option<&Value>) -> Option<Option<&Number>> {
    match v {
        None => Some(None),
        Some(Value::Number(n)) if n.as_f64().is_some_and(|f| f > 0.0) => Some(Some(n)),
        Some(_) => None,
    }
}

/// Is `n` a (positive integer) multiple of `d`?
pub(super) fn is_multiple(n: &Number, d: &Number) -> bool {
    if let (Some(n), Some(d)) = (n.as_u64(), d.as_u64()) {
        return d != 0 && n % d == 0;
    }
    let (Some(n), Some(d)) = (n.as_f64(), d.as_f64()) else {
        return false;
    };
    let r = n / d;
    r.round() >= 1.0 && (r - r.round()).abs() <= 1e-9 * r.abs().max(1.0)
}

pub(super) fn opt_eq(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(x), Some(y)) => json_eq(x, y),
        _ => false,
    }
}
