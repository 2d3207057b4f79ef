//! Verification keys from an authorization server's JWKS (RFC 7517), for
//! `--auth-jwks`: RS256 and ES256 signatures checked with `ring` (already in the
//! workspace through rustls). The set is fetched once at start (the authorization server
//! runs first in the tests); a real resource server would refetch on an unknown `kid`.

use std::collections::HashMap;
use std::time::Duration;

use ring::signature::{self, RsaPublicKeyComponents, UnparsedPublicKey};
use serde_json::Value;

use crate::auth::b64url_decode;

/// Largest JWKS document read: a key set is a few kilobytes.
const MAX_JWKS_BYTES: usize = 1024 * 1024;

/// One public key, as its algorithm needs it.
#[derive(Debug, Clone)]
enum PublicKey {
    /// RS256: modulus and exponent, big-endian.
    Rsa { n: Vec<u8>, e: Vec<u8> },
    /// ES256: the uncompressed P-256 point `04 || x || y`.
    P256(Vec<u8>),
}

/// The key set, by `kid` (a key without one is found by algorithm alone).
#[derive(Debug, Clone, Default)]
pub struct Jwks {
    keys: HashMap<String, PublicKey>,
}

impl Jwks {
    /// GET the key set at `url` (bounded in time and size).
    pub async fn fetch(url: &str) -> Result<Jwks, String> {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .redirect(reqwest::redirect::Policy::limited(3))
            .build()
            .map_err(|e| e.to_string())?;
        let response = client
            .get(url)
            .send()
            .await
            .map_err(|e| format!("GET {url}: {e}"))?;
        if !response.status().is_success() {
            return Err(format!("GET {url}: HTTP {}", response.status()));
        }
        let body = response
            .bytes()
            .await
            .map_err(|e| format!("GET {url}: {e}"))?;
        if body.len() > MAX_JWKS_BYTES {
            return Err(format!(
                "GET {url}: the key set is over {MAX_JWKS_BYTES} bytes"
            ));
        }
        let doc: Value =
            serde_json::from_slice(&body).map_err(|e| format!("GET {url}: not JSON: {e}"))?;
        Jwks::from_json(&doc).map_err(|e| format!("GET {url}: {e}"))
    }

    /// The RSA and P-256 keys of a JWKS document (other key types are skipped).
    pub fn from_json(doc: &Value) -> Result<Jwks, String> {
        let keys = doc
            .get("keys")
            .and_then(Value::as_array)
            .ok_or("no `keys` array")?;
        let mut set = Jwks::default();
        for (i, key) in keys.iter().enumerate() {
            let field = |name: &str| {
                key.get(name)
                    .and_then(Value::as_str)
                    .and_then(b64url_decode)
                    .ok_or_else(|| format!("key {i}: no base64url `{name}`"))
            };
            let public = match key.get("kty").and_then(Value::as_str) {
                Some("RSA") => PublicKey::Rsa {
                    n: field("n")?,
                    e: field("e")?,
                },
                Some("EC") if key.get("crv").and_then(Value::as_str) == Some("P-256") => {
                    let mut point = vec![4u8];
                    point.extend(field("x")?);
                    point.extend(field("y")?);
                    PublicKey::P256(point)
                }
                _ => continue,
            };
            let kid = key.get("kid").and_then(Value::as_str).unwrap_or("");
            set.keys.insert(kid.to_owned(), public);
        }
        if set.keys.is_empty() {
            return Err("no RSA or P-256 key in the set".into());
        }
        Ok(set)
    }

    /// Whether `signature` over `signed` is valid for `alg` with the key `kid`.
    pub fn verify(&self, alg: &str, kid: Option<&str>, signed: &[u8], signature: &[u8]) -> bool {
        let key = match kid {
            Some(kid) => self.keys.get(kid),
            None => self.keys.values().find(|k| match k {
                PublicKey::Rsa { .. } => alg == "RS256",
                PublicKey::P256(_) => alg == "ES256",
            }),
        };
        match (alg, key) {
            ("RS256", Some(PublicKey::Rsa { n, e })) => RsaPublicKeyComponents { n, e }
                .verify(&signature::RSA_PKCS1_2048_8192_SHA256, signed, signature)
                .is_ok(),
            ("ES256", Some(PublicKey::P256(point))) => {
                UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, point)
                    .verify(signed, signature)
                    .is_ok()
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::rand::SystemRandom;
    use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};

    #[test]
    fn verifies_es256_and_refuses_a_changed_message() {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .unwrap();
        let point = pair.public_key().as_ref();
        use base64::Engine as _;
        let b64 = |b: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b);
        let doc = serde_json::json!({"keys": [{"kty": "EC", "crv": "P-256", "kid": "k1",
            "x": b64(&point[1..33]), "y": b64(&point[33..])}]});
        let jwks = Jwks::from_json(&doc).unwrap();
        let signature = pair.sign(&rng, b"head.payload").unwrap();
        assert!(jwks.verify("ES256", Some("k1"), b"head.payload", signature.as_ref()));
        assert!(!jwks.verify("ES256", Some("k1"), b"head.payloaX", signature.as_ref()));
        assert!(!jwks.verify("RS256", Some("k1"), b"head.payload", signature.as_ref()));
        assert!(!jwks.verify("ES256", Some("k2"), b"head.payload", signature.as_ref()));
    }
}
