//! A YAML value that remembers where each of its nodes came from.
//!
//! Request params, expected values and variables are arbitrary JSON-like trees whose
//! string leaves may hold templates. Keeping positions per node lets a template error
//! inside `params.arguments.city` point at that exact line, and lets templating work on
//! parsed values only (never on the raw file text).

use std::fmt;

use schemars::JsonSchema;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// A positioned YAML/JSON value.
#[derive(Debug, Clone, PartialEq)]
pub struct TValue {
    pub line: u32,
    pub col: u32,
    pub kind: TKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum TKind {
    Null,
    Bool(bool),
    Number(Number),
    Str(String),
    Seq(Vec<TValue>),
    Map(Vec<(String, TValue)>),
}

impl TValue {
    /// The value as plain JSON, with no templating applied.
    /// A JSON value as a TValue whose nodes all have the position `line:col` (read from
    /// another file: a data file of `each`).
    pub fn from_json(v: &Value, line: u32, col: u32) -> TValue {
        let kind = match v {
            Value::Null => TKind::Null,
            Value::Bool(b) => TKind::Bool(*b),
            Value::Number(n) => TKind::Number(n.clone()),
            Value::String(s) => TKind::Str(s.clone()),
            Value::Array(items) => TKind::Seq(
                items
                    .iter()
                    .map(|i| TValue::from_json(i, line, col))
                    .collect(),
            ),
            Value::Object(map) => TKind::Map(
                map.iter()
                    .map(|(k, i)| (k.clone(), TValue::from_json(i, line, col)))
                    .collect(),
            ),
        };
        TValue { line, col, kind }
    }

    pub fn to_json(&self) -> Value {
        match &self.kind {
            TKind::Null => Value::Null,
            TKind::Bool(b) => Value::Bool(*b),
            TKind::Number(n) => Value::Number(n.clone()),
            TKind::Str(s) => Value::String(s.clone()),
            TKind::Seq(items) => Value::Array(items.iter().map(TValue::to_json).collect()),
            TKind::Map(entries) => Value::Object(
                entries
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_json()))
                    .collect::<Map<String, Value>>(),
            ),
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self.kind, TKind::Null)
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            TKind::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn get(&self, key: &str) -> Option<&TValue> {
        match &self.kind {
            TKind::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Visit every string leaf (used to check templates statically).
    pub fn for_each_string(&self, f: &mut dyn FnMut(&str, u32, u32)) {
        match &self.kind {
            TKind::Str(s) => f(s, self.line, self.col),
            TKind::Seq(items) => items.iter().for_each(|v| v.for_each_string(f)),
            TKind::Map(entries) => entries.iter().for_each(|(_, v)| v.for_each_string(f)),
            _ => {}
        }
    }
}

impl<'de> Deserialize<'de> for TValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let at = At::<TKind>::deserialize(deserializer)?;
        Ok(TValue {
            line: at.line,
            col: at.col,
            kind: at.value,
        })
    }
}

impl<'de> Deserialize<'de> for TKind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(KindVisitor)
    }
}

struct KindVisitor;

impl<'de> Visitor<'de> for KindVisitor {
    type Value = TKind;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<TKind, E> {
        Ok(TKind::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<TKind, E> {
        Ok(TKind::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<TKind, D::Error> {
        TKind::deserialize(d)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<TKind, E> {
        Ok(TKind::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<TKind, E> {
        Ok(TKind::Number(v.into()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<TKind, E> {
        Ok(TKind::Number(v.into()))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<TKind, E> {
        i64::try_from(v)
            .map(|v| TKind::Number(v.into()))
            .map_err(|_| E::custom("integer out of range"))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<TKind, E> {
        u64::try_from(v)
            .map(|v| TKind::Number(v.into()))
            .map_err(|_| E::custom("integer out of range"))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<TKind, E> {
        Number::from_f64(v)
            .map(TKind::Number)
            .ok_or_else(|| E::custom("NaN and infinity are not JSON numbers"))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<TKind, E> {
        Ok(TKind::Str(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<TKind, E> {
        Ok(TKind::Str(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<TKind, A::Error> {
        let mut items = Vec::with_capacity(capacity(seq.size_hint()));
        while let Some(item) = seq.next_element::<TValue>()? {
            items.push(item);
        }
        Ok(TKind::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TKind, A::Error> {
        let mut entries: Vec<(String, TValue)> = Vec::with_capacity(capacity(map.size_hint()));
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value::<TValue>()?;
            entries.push((key, value));
        }
        Ok(TKind::Map(entries))
    }
}

impl JsonSchema for TValue {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "AnyValue".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "Any YAML/JSON value. String leaves may contain minijinja templates (`{{ var }}`); a string that is exactly one `{{ expr }}` keeps the type of the expression."
        })
    }
}

/// The capacity to reserve for a collection of `hint` elements: when the deserializer
/// knows a collection's length, one allocation of the right size replaces growing (and
/// copying) a vector; a hint is only a hint, so it is bounded.
fn capacity(hint: Option<usize>) -> usize {
    hint.unwrap_or(0).min(1 << 16)
}

/// Deserialize a sequence into a vector allocated once, with [`capacity`]: serde's own
/// `Vec` caps what it reserves at 1 MiB, and the steps of a long scenario (over a kilobyte
/// each) were moved to a larger allocation several times.
pub fn exact_vec<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct ExactVec<T>(std::marker::PhantomData<T>);

    impl<'de, T: Deserialize<'de>> Visitor<'de> for ExactVec<T> {
        type Value = Vec<T>;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a sequence")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
            let mut items = Vec::with_capacity(capacity(seq.size_hint()));
            while let Some(item) = seq.next_element()? {
                items.push(item);
            }
            Ok(items)
        }
    }

    deserializer.deserialize_seq(ExactVec(std::marker::PhantomData))
}

/// A value with the position of its node.
#[derive(Debug, Clone)]
pub struct At<T> {
    pub value: T,
    pub line: u32,
    pub col: u32,
}

/// The position is where the node starts, as mcpspec's YAML reader tells it ([`super::de::AT`]);
/// read by another deserializer (serde's buffer for an untagged enum, JSON), the value
/// has no position (0:0).
impl<'de, T: Deserialize<'de>> Deserialize<'de> for At<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_newtype_struct(super::de::AT, AtVisitor(std::marker::PhantomData))
    }
}

struct AtVisitor<T>(std::marker::PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for AtVisitor<T> {
    type Value = At<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a value")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<At<T>, A::Error> {
        let missing = || de::Error::custom("a positioned value");
        let line = seq.next_element()?.ok_or_else(missing)?;
        let col = seq.next_element()?.ok_or_else(missing)?;
        let value = seq.next_element()?.ok_or_else(missing)?;
        Ok(At { value, line, col })
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<At<T>, D::Error> {
        Ok(At {
            value: T::deserialize(d)?,
            line: 0,
            col: 0,
        })
    }
}

impl<T: JsonSchema> JsonSchema for At<T> {
    fn inline_schema() -> bool {
        T::inline_schema()
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        T::schema_name()
    }
    fn schema_id() -> std::borrow::Cow<'static, str> {
        T::schema_id()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        T::json_schema(generator)
    }
}

impl<T> std::ops::Deref for At<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}
