//! Project configuration (`mcpspec.yaml` at the project root): named targets, default
//! eras, what to run, reports and baseline — so a CI job runs `mcpspec run` and nothing
//! else. Command-line flags override it.

use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::face::cli::RunArgs;
use crate::ground::load_error::{LoadError, LoadErrors, did_you_mean};
use crate::ground::source::{Pos, SourceFile};
use crate::ground::yaml::At;
use crate::language::dsl::limits;

/// The file `mcpspec run` reads when present in the working directory.
pub const DEFAULT_FILE: &str = "mcpspec.yaml";

/// `mcpspec.yaml`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(title = "mcpspec project configuration")]
pub struct ConfigDoc {
    /// Named targets (`--target NAME`).
    #[serde(default)]
    pub targets: IndexMap<String, TargetDoc>,
    /// The target used when no `--target`, `--stdio` or `--url` is given (default: the
    /// only target, when there is one).
    #[serde(default)]
    pub default_target: Option<At<String>>,
    /// Scenario files, folders or built-in packs to run when none are given.
    #[serde(default)]
    pub paths: Vec<At<String>>,
    /// Packs to run as well when none are given on the command line, as a pack imports
    /// them: `git:` with `rev:`, `archive:` with `sha256:` (pinned by `mcpspec.lock`), or
    /// `pack:` (a folder relative to this file, or a built-in pack).
    #[serde(default)]
    pub imports: Vec<At<crate::language::dsl::document::ImportDoc>>,
    /// Default eras (a matrix when several).
    #[serde(default)]
    pub eras: Vec<At<String>>,
    /// JUnit XML report file.
    #[serde(default)]
    pub junit: Option<String>,
    /// The JUnit report's shape: `default` (richer: GitLab, GitHub) or `jenkins` (strict:
    /// the Jenkins xUnit plugin's junit-10.xsd). `--junit-flavor` overrides it.
    #[serde(default)]
    pub junit_flavor: Option<crate::results::junit::Flavor>,
    /// JSON result file.
    #[serde(default)]
    pub json: Option<String>,
    /// Expected-failures baseline.
    #[serde(default)]
    pub expected_failures: Option<String>,
    /// Per-request timeout, e.g. `10s` (1ms to 1day).
    #[serde(default)]
    pub timeout: Option<At<String>>,
    /// Scenarios in parallel.
    #[serde(default)]
    #[schemars(range(min = *limits::JOBS.start(), max = *limits::JOBS.end()))]
    pub jobs: Option<At<usize>>,
    /// Warnings fail the run.
    #[serde(default)]
    pub strict: Option<bool>,
    /// Parameter values: template variables of every scenario and values of pack
    /// parameters (below `--set`, above `MCPSPEC_PARAM_<NAME>`). `env:VAR` reads the
    /// environment variable and is a secret, as with `--set`.
    #[serde(default)]
    pub parameters: IndexMap<String, crate::ground::yaml::value::TValue>,
    /// The client every scenario plays unless it (or its pack) declares its own: client
    /// capabilities and scripted answers (see `client:` in a scenario).
    #[serde(default)]
    pub client: Option<At<crate::language::dsl::document::ClientDoc>>,
    /// The load profile of `mcpspec load` (clients or rate, duration, warm-up, ramp,
    /// steps, think time), below a scenario's `load:` and the command line.
    #[serde(default)]
    pub load: Option<At<crate::language::dsl::document::LoadDoc>>,
}

/// How to reach one server.
#[derive(Debug, Deserialize, JsonSchema, Default, Clone)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TargetDoc {
    /// Command line of a stdio server.
    #[serde(default)]
    pub stdio: Option<String>,
    /// Streamable HTTP endpoint.
    #[serde(default)]
    pub url: Option<String>,
    /// Environment of the stdio server.
    #[serde(default)]
    pub env: IndexMap<String, String>,
    /// Working directory of the stdio server (relative to this file).
    #[serde(default)]
    pub cwd: Option<String>,
    /// Run the stdio server sandboxed, as `--sandbox` does (Linux: no route out of the
    /// machine, every file read-only but a private temporary HOME).
    #[serde(default)]
    pub sandbox: bool,
    /// HTTP headers.
    #[serde(default)]
    pub headers: IndexMap<String, String>,
    /// Environment variable holding a bearer token.
    #[serde(default)]
    pub bearer_env: Option<String>,
    /// OAuth sign-in for the run (HTTP targets): the token of every request is fetched
    /// from the server's authorization server, found from its 401 challenge.
    #[serde(default)]
    pub auth: Option<At<AuthDoc>>,
}

/// `auth:` of a target. Secrets are named (a variable, a file), never written here.
#[derive(Debug, Deserialize, JsonSchema, Clone)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AuthDoc {
    /// The OAuth grant.
    pub grant: Grant,
    /// The client id registered with the authorization server.
    pub client_id: String,
    /// Environment variable holding the client secret.
    #[serde(default)]
    pub client_secret_env: Option<String>,
    /// File holding the client secret (relative to this file).
    #[serde(default)]
    pub client_secret_file: Option<String>,
    /// `private_key_jwt`: a PKCS#8 PEM private key file (relative to this file) signing
    /// the client assertion, instead of a client secret (`client_credentials`).
    #[serde(default)]
    pub client_key_file: Option<String>,
    /// `refresh_token`: environment variable holding the stored refresh token.
    #[serde(default)]
    pub refresh_token_env: Option<String>,
    /// `refresh_token`: file holding the stored refresh token (relative to this file).
    #[serde(default)]
    pub refresh_token_file: Option<String>,
    /// The scope to ask for (default: the server's challenge, else its metadata).
    #[serde(default)]
    pub scope: Option<String>,
    /// Not allowed: read so that a secret written in the file is told as such.
    #[serde(default)]
    #[schemars(skip)]
    pub client_secret: Option<At<String>>,
}

/// The OAuth grants mcpspec signs in with.
#[derive(Debug, Deserialize, JsonSchema, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Grant {
    /// A confidential client's own credentials (RFC 6749 §4.4): CI.
    ClientCredentials,
    /// A stored refresh token (RFC 6749 §6): CI against servers whose tokens belong to a
    /// user.
    RefreshToken,
    /// A person signs in with `mcpspec auth login` (PKCE); runs use the cached tokens.
    AuthorizationCode,
}

/// The mistakes of a target's `auth:` block, each at its line.
fn check_auth(file: &std::sync::Arc<SourceFile>, name: &str, target: &TargetDoc) -> Vec<LoadError> {
    let Some(auth) = &target.auth else {
        return Vec::new();
    };
    let at = |line, col| Pos::new(file, line, col);
    let mut errors = Vec::new();
    if let Some(secret) = &auth.client_secret {
        // Told without the snippet, which would show the secret's line.
        errors.push(
            LoadError::file(
                format!("{}:{}:{}", file.name, secret.line, secret.col),
                format!("target `{name}`: `clientSecret` writes the secret in the file"),
            )
            .with_help("name where it is read from instead: `clientSecretEnv: VAR` or `clientSecretFile: PATH`"),
        );
    }
    let sources = [&auth.client_secret_env, &auth.client_secret_file];
    let secrets = sources.iter().filter(|s| s.is_some()).count();
    let refresh = [&auth.refresh_token_env, &auth.refresh_token_file]
        .iter()
        .filter(|s| s.is_some())
        .count();
    let mut wrong = |what: String| {
        errors.push(LoadError::at(
            at(auth.line, auth.col),
            format!("target `{name}`: {what}"),
        ))
    };
    match auth.grant {
        Grant::RefreshToken if refresh != 1 => wrong(
            "`grant: refresh_token` needs one of `refreshTokenEnv` and `refreshTokenFile`".into(),
        ),
        Grant::ClientCredentials | Grant::AuthorizationCode if refresh != 0 => {
            wrong("`refreshTokenEnv`/`refreshTokenFile` belong to `grant: refresh_token`".into())
        }
        _ => {}
    }
    if auth.client_key_file.is_some() && (secrets != 0 || auth.grant != Grant::ClientCredentials) {
        wrong("`clientKeyFile` (private_key_jwt) goes with `grant: client_credentials` and no client secret".into());
    }
    if secrets > 1 {
        wrong("give one of `clientSecretEnv` and `clientSecretFile`".into());
    }
    let needs_secret = auth.grant == Grant::ClientCredentials && auth.client_key_file.is_none();
    if auth.client_secret.is_none() && needs_secret && secrets != 1 {
        errors.push(
            LoadError::at(
                at(auth.line, auth.col),
                format!(
                    "target `{name}`: `auth:` needs one of `clientSecretEnv` and `clientSecretFile`"
                ),
            )
            .with_help("e.g. `clientSecretEnv: MCP_CLIENT_SECRET`"),
        );
    }
    if target.url.is_none() {
        errors.push(LoadError::at(
            at(auth.line, auth.col),
            format!("target `{name}`: `auth:` applies to `url:` targets"),
        ));
    }
    if target.bearer_env.is_some() {
        errors.push(LoadError::at(
            at(auth.line, auth.col),
            format!("target `{name}`: give `auth:` or `bearerEnv:`, not both"),
        ));
    }
    errors
}

/// `name` is not among the targets of the file.
fn no_target(file: &SourceFile, d: &ConfigDoc, name: &str, pos: Option<Pos>) -> LoadError {
    let help = match did_you_mean(name, d.targets.keys().map(String::as_str)) {
        Some(s) => format!("did you mean `{s}`?"),
        None => format!(
            "targets defined: {}",
            d.targets.keys().cloned().collect::<Vec<_>>().join(", ")
        ),
    };
    let message = format!("no target named `{name}` in {}", file.name);
    match pos {
        Some(p) => LoadError::at(p, message),
        None => LoadError::file(&file.name, message),
    }
    .with_help(help)
}

/// The eras, `defaultTarget` and numbers of the file valid, whether or not a flag overrides them (the
/// file is wrong either way), each error at its line.
fn check_values(
    file: &std::sync::Arc<SourceFile>,
    doc: &ConfigDoc,
    dir: &Path,
) -> Result<(), LoadErrors> {
    let mut errors = LoadErrors::default();
    // A `paths:` entry that names nothing: here, at its line (not later, as a bare path).
    for p in &doc.paths {
        let file_part = crate::face::select::split_file_line(Path::new(p.as_str())).0;
        if !dir.join(&file_part).exists() && crate::language::dsl::builtin::resolve(p).is_none() {
            errors.push(
                LoadError::at(
                    Pos::new(file, p.line, p.col),
                    format!(
                        "`paths:` entry `{}`: no such file or folder (paths are relative to this file)",
                        p.value
                    ),
                )
                .with_help("name a scenario file or folder, a pack folder or a built-in pack (`mcpspec list`)"),
            );
        }
    }
    for (name, target) in &doc.targets {
        for error in check_auth(file, name, target) {
            errors.push(error);
        }
    }
    for era in &doc.eras {
        if let Err(e) = crate::protocol::era::Era::parse(&era.value) {
            let error = LoadError::at(Pos::new(file, era.line, era.col), e);
            errors.push(error.suggesting(&era.value, crate::protocol::era::NAMES));
        }
    }
    if let Some(name) = &doc.default_target
        && !doc.targets.contains_key(&name.value)
    {
        let pos = Pos::new(file, name.line, name.col);
        errors.push(no_target(file, doc, &name.value, Some(pos)));
    }
    if let Some(jobs) = doc
        .jobs
        .as_ref()
        .filter(|j| !limits::JOBS.contains(&j.value))
    {
        errors.push(
            LoadError::at(
                Pos::new(file, jobs.line, jobs.col),
                format!("jobs {} is out of range", jobs.value),
            )
            .with_help(format!("expected {}", limits::describe(&limits::JOBS))),
        );
    }
    if let Some(t) = &doc.timeout
        && let Err(e) = limits::duration(t, &limits::TIMEOUT)
    {
        errors.push(
            LoadError::at(
                Pos::new(file, t.line, t.col),
                format!("invalid timeout `{}`: {e}", t.value),
            )
            .with_help("expected a duration such as `500ms`, `10s` or `1m`"),
        );
    }
    // `client:` is checked here whether or not a scenario uses it (a declared capability
    // without an answer, an unknown template variable).
    if let Some(client) = &doc.client {
        let params: Vec<String> = doc.parameters.keys().cloned().collect();
        if let Err(e) = crate::language::dsl::compile_client(file, client.clone(), &params) {
            errors.0.extend(e.0);
        }
    }
    if let Some(load) = &doc.load
        && let Err(e) = crate::language::dsl::compile_load_profile(file, load)
    {
        errors.0.extend(e.0);
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

pub struct Config {
    pub doc: ConfigDoc,
    pub file: std::sync::Arc<SourceFile>,
    pub dir: PathBuf,
}

impl Config {
    /// The `client:` of the file, compiled (the default of every scenario's), if any.
    pub fn client(
        &self,
        params: &[String],
    ) -> Result<Option<std::sync::Arc<crate::language::dsl::ClientScript>>, LoadErrors> {
        let Some(doc) = self.doc.client.clone() else {
            return Ok(None);
        };
        crate::language::dsl::compile_client(&self.file, doc, params)
            .map(|c| Some(std::sync::Arc::new(c)))
    }

    /// The `load:` profile of the file (checked when the file was read), if any.
    pub fn load_profile(
        &self,
    ) -> (
        crate::language::dsl::workload::ProfileParts,
        Vec<crate::language::dsl::workload::Budget>,
    ) {
        self.doc
            .load
            .as_ref()
            .and_then(|l| crate::language::dsl::compile_load_profile(&self.file, l).ok())
            .unwrap_or_default()
    }

    /// Load `path`, or `./mcpspec.yaml` when `path` is `None` and the file exists.
    pub fn find(path: Option<&Path>) -> Result<Option<Config>, LoadErrors> {
        let path = match path {
            Some(p) => p.to_path_buf(),
            None if Path::new(DEFAULT_FILE).is_file() => PathBuf::from(DEFAULT_FILE),
            None => return Ok(None),
        };
        let file = crate::ground::load_error::read_source(&path)?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let doc: ConfigDoc = match crate::ground::yaml::parse_recovering(&file) {
            Ok(doc) => doc,
            // A wrong key does not hide the file's other mistakes: the rest is checked too.
            Err((errors, Some(rest))) => {
                let more = check_values(&file, &rest.doc, &dir)
                    .err()
                    .unwrap_or_default();
                return Err(rest.blanked.merge(errors, more));
            }
            Err((errors, None)) => return Err(errors),
        };
        check_values(&file, &doc, &dir)?;
        Ok(Some(Config { doc, file, dir }))
    }

    /// `parameters:` as given values (positions kept for type errors); `env:VAR` values
    /// are read from the environment and recorded as secrets.
    pub fn parameters(
        &self,
        secrets: &mut Vec<String>,
    ) -> Result<Vec<(String, crate::language::dsl::params::Given)>, LoadErrors> {
        self.parameters_with(secrets, &mut None)
    }

    /// `parameters:` for `validate`, which needs no value: those whose `env:VAR` is not
    /// set come back as names only (still template variables of every scenario).
    pub fn parameters_to_validate(
        &self,
    ) -> (
        Vec<(String, crate::language::dsl::params::Given)>,
        Vec<String>,
    ) {
        let mut unset = Some(Vec::new());
        let given = self
            .parameters_with(&mut Vec::new(), &mut unset)
            .unwrap_or_default();
        (given, unset.unwrap_or_default())
    }

    /// The parameters with their values; an `env:VAR` not set is an error, or (`unset`
    /// given) its name is put there.
    fn parameters_with(
        &self,
        secrets: &mut Vec<String>,
        unset: &mut Option<Vec<String>>,
    ) -> Result<Vec<(String, crate::language::dsl::params::Given)>, LoadErrors> {
        let mut out = Vec::new();
        for (name, value) in &self.doc.parameters {
            let pos = Pos::new(&self.file, value.line, value.col);
            let mut json = value.to_json();
            if let Some(var) = value.as_str().and_then(|s| s.strip_prefix("env:")) {
                let read = std::env::var(var);
                if read.is_err()
                    && let Some(names) = unset
                {
                    names.push(name.clone());
                    continue;
                }
                let v = read.map_err(|_| {
                    LoadError::at(
                        pos.clone(),
                        format!("parameter `{name}`: the environment variable `{var}` is not set"),
                    )
                })?;
                if !v.is_empty() {
                    secrets.push(v.clone());
                }
                json = serde_json::Value::String(v);
            }
            let from_text = value.as_str().is_some_and(|s| s.starts_with("env:"));
            out.push((
                name.clone(),
                crate::language::dsl::params::Given {
                    value: json,
                    pos: Some(pos),
                    from_text,
                },
            ));
        }
        Ok(out)
    }

    pub fn resolve(&self, p: &str) -> PathBuf {
        let candidate = self.dir.join(p);
        // Built-in pack names stay names.
        if !candidate.exists() && crate::language::dsl::builtin::resolve(p).is_some() {
            return PathBuf::from(p);
        }
        candidate
    }

    /// `paths:`, relative to this file (built-in pack names stay names).
    pub fn paths(&self) -> Vec<PathBuf> {
        self.doc.paths.iter().map(|p| self.resolve(p)).collect()
    }

    /// `expectedFailures:`, relative to this file.
    pub fn baseline_path(&self) -> Option<PathBuf> {
        self.doc
            .expected_failures
            .as_ref()
            .map(|p| self.dir.join(p))
    }

    /// Fill what the command line left unset; flags always win.
    pub fn apply(&self, args: &mut RunArgs, target_name: Option<&str>) -> Result<(), LoadErrors> {
        let d = &self.doc;
        if args.paths.is_empty() {
            args.paths = self.paths();
        }
        if args.eras.is_empty() {
            args.eras = d.eras.iter().map(|e| e.value.clone()).collect();
        }
        let t = &mut args.target;
        if t.stdio.is_none() && t.url.is_none() {
            let name = match (target_name, &d.default_target) {
                (Some(n), _) => Some(n.to_string()),
                (None, Some(n)) => Some(n.value.clone()),
                (None, None) if d.targets.len() == 1 => d.targets.keys().next().cloned(),
                _ => None,
            };
            if let Some(name) = name {
                let Some(target) = d.targets.get(&name) else {
                    let pos = d
                        .default_target
                        .as_ref()
                        .filter(|n| target_name.is_none() && n.value == name)
                        .map(|n| Pos::new(&self.file, n.line, n.col));
                    return Err(no_target(&self.file, d, &name, pos).into());
                };
                t.stdio = target.stdio.clone();
                t.url = target.url.clone();
                let mut env: Vec<String> =
                    target.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
                env.append(&mut t.env);
                t.env = env;
                let mut headers: Vec<String> = target
                    .headers
                    .iter()
                    .map(|(k, v)| format!("{k}: {v}"))
                    .collect();
                headers.append(&mut t.headers);
                t.headers = headers;
                if t.cwd.is_none() {
                    t.cwd = target.cwd.as_ref().map(|c| self.dir.join(c));
                }
                t.sandbox |= target.sandbox;
                if t.bearer_env.is_none() {
                    t.bearer_env = target.bearer_env.clone();
                }
                if let Some(auth) = target.auth.as_ref().filter(|_| t.oauth_client_id.is_none()) {
                    // The grant follows from the sources given (checked by `check_auth`):
                    // a client id alone is the cached `auth login`.
                    let a = &auth.value;
                    let file = |f: &Option<String>| f.as_ref().map(|f| self.dir.join(f));
                    t.oauth_client_id = Some(a.client_id.clone());
                    t.oauth_client_secret_env = a.client_secret_env.clone();
                    t.oauth_client_secret_file = file(&a.client_secret_file);
                    t.oauth_client_key_file = file(&a.client_key_file);
                    t.oauth_refresh_token_env = a.refresh_token_env.clone();
                    t.oauth_refresh_token_file = file(&a.refresh_token_file);
                    t.oauth_scope = a.scope.clone();
                }
            }
        } else if let Some(name) = target_name {
            return Err(LoadError::file(
                &self.file.name,
                format!("--target {name} conflicts with --stdio/--url"),
            )
            .into());
        }
        if t.timeout.is_none()
            && let Some(s) = &d.timeout
        {
            t.timeout = Some(limits::duration(s, &limits::TIMEOUT).map_err(|e| {
                LoadError::at(
                    Pos::new(&self.file, s.line, s.col),
                    format!("invalid timeout `{}`: {e}", s.value),
                )
            })?);
        }
        if args.junit.is_none() {
            args.junit = d.junit.as_ref().map(|p| self.dir.join(p));
        }
        if args.junit_flavor.is_none() {
            args.junit_flavor = d.junit_flavor;
        }
        if args.json.is_none() {
            args.json = d.json.as_ref().map(|p| self.dir.join(p));
        }
        if args.expected_failures.is_none() {
            args.expected_failures = self.baseline_path();
        }
        if args.jobs.is_none() {
            args.jobs = d.jobs.as_ref().map(|j| j.value);
        }
        args.strict |= d.strict.unwrap_or(false);
        Ok(())
    }
}
