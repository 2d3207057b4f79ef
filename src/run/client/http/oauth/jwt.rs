//! `private_key_jwt` client authentication (RFC 7523 §2.2, OpenID Connect Core §9): a
//! short-lived JWT the client signs with its own private key (RS256 or ES256, a PKCS#8 PEM
//! file), sent instead of a client secret. And the random values the flow needs (PKCE
//! verifier, `state`, the assertion's `jti`).

use base64::Engine as _;
use ring::rand::SecureRandom as _;
use ring::signature::{self, EcdsaKeyPair, RsaKeyPair};

/// How long a client assertion is valid: the token request follows at once.
const ASSERTION_LIFETIME_SECS: u64 = 300;

/// A client's private key (never printed).
pub struct SigningKey {
    key: Key,
}

enum Key {
    Rs256(RsaKeyPair),
    Es256(EcdsaKeyPair),
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.key {
            Key::Rs256(_) => "SigningKey(RS256)",
            Key::Es256(_) => "SigningKey(ES256)",
        })
    }
}

impl SigningKey {
    /// A PKCS#8 private key in PEM (`-----BEGIN PRIVATE KEY-----`): RSA (RS256) or P-256
    /// (ES256). Errors never quote the key.
    pub fn from_pem(pem: &str) -> Result<SigningKey, String> {
        let body: String = pem
            .lines()
            .map(str::trim)
            .skip_while(|l| *l != "-----BEGIN PRIVATE KEY-----")
            .skip(1)
            .take_while(|l| !l.starts_with("-----END"))
            .collect();
        if body.is_empty() {
            return Err(
                "not a PKCS#8 PEM private key (`-----BEGIN PRIVATE KEY-----`; convert with `openssl pkcs8 -topk8 -nocrypt`)"
                    .into(),
            );
        }
        let der = base64::engine::general_purpose::STANDARD
            .decode(body)
            .map_err(|_| "the PEM body is not base64".to_string())?;
        if let Ok(rsa) = RsaKeyPair::from_pkcs8(&der) {
            return Ok(SigningKey {
                key: Key::Rs256(rsa),
            });
        }
        let rng = ring::rand::SystemRandom::new();
        EcdsaKeyPair::from_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, &der, &rng)
            .map(|ec| SigningKey {
                key: Key::Es256(ec),
            })
            .map_err(|_| "the key is neither an RSA nor a P-256 PKCS#8 private key".into())
    }

    /// The client assertion for a token request at `audience` (the token endpoint).
    pub fn client_assertion(&self, client_id: &str, audience: &str) -> Result<String, String> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let alg = match self.key {
            Key::Rs256(_) => "RS256",
            Key::Es256(_) => "ES256",
        };
        let header = serde_json::json!({"alg": alg, "typ": "JWT"});
        let claims = serde_json::json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "jti": random_token(16)?,
            "iat": now,
            "exp": now + ASSERTION_LIFETIME_SECS,
        });
        let input = format!(
            "{}.{}",
            b64url(header.to_string().as_bytes()),
            b64url(claims.to_string().as_bytes())
        );
        let rng = ring::rand::SystemRandom::new();
        let signature = match &self.key {
            Key::Rs256(rsa) => {
                let mut out = vec![0; rsa.public().modulus_len()];
                rsa.sign(
                    &signature::RSA_PKCS1_SHA256,
                    &rng,
                    input.as_bytes(),
                    &mut out,
                )
                .map_err(|_| "RSA signing failed".to_string())?;
                out
            }
            Key::Es256(ec) => ec
                .sign(&rng, input.as_bytes())
                .map_err(|_| "ECDSA signing failed".to_string())?
                .as_ref()
                .to_vec(),
        };
        Ok(format!("{input}.{}", b64url(&signature)))
    }
}

/// Unpadded base64url (RFC 4648 §5), as JWTs and PKCE use it.
pub fn b64url(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// `bytes` random bytes from the system, base64url: a `state`, a PKCE verifier, a `jti`.
pub fn random_token(bytes: usize) -> Result<String, String> {
    let mut buf = vec![0u8; bytes];
    ring::rand::SystemRandom::new()
        .fill(&mut buf)
        .map_err(|_| "the system's random source failed".to_string())?;
    Ok(b64url(&buf))
}

/// The PKCE `S256` challenge of `verifier` (RFC 7636 §4.2).
pub fn s256_challenge(verifier: &str) -> String {
    use sha2::Digest as _;
    b64url(&sha2::Sha256::digest(verifier.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_s256_challenge_is_rfc_7636s_example() {
        // RFC 7636 Appendix B.
        assert_eq!(
            s256_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn a_file_that_is_no_key_is_told_without_quoting_it() {
        let e = SigningKey::from_pem("hunter2").unwrap_err();
        assert!(!e.contains("hunter2"), "{e}");
    }
}
