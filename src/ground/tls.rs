//! The process's TLS crypto provider: every HTTPS client of the program (transports, remote
//! packs, the eval model client) installs it through this one function, so none of them
//! has to import another's module for it.

/// Make `ring` the process's rustls crypto provider unless one is installed already.
/// reqwest is built with `rustls-no-provider` (its `rustls` feature would compile
/// aws-lc-sys, most of a clean build), and without a process provider its client builder
/// panics. Idempotent: a second call, or a provider installed by the embedding program,
/// leaves the installed one in place.
pub fn install_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Err only when another thread installed one meanwhile: that one is used.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}
