//! Which values are credentials, so that no view shows them. An app's spec and a HelmRelease's
//! values are where Cozystack users put passwords (`users.<name>.password`, `s3SecretKey`,
//! `resticPassword`); the YAML view must show the shape of the object, never the secret.
//!
//! A key names a credential when one of its words does (`password`, `secret`, `token`,
//! `credentials`...), or when it is a `key` qualified as one (`apiKey`, `s3AccessKey`,
//! `tls.key`); words are split at `-`, `_`, `.`, `/` and camelCase. A key whose last word says it
//! only *points at* a credential (`secretName`, `passwordSecretRef`, `tokenId`) is kept visible:
//! knowing which Secret is used is what an operator needs. `keepOriginalPVC`, `monkey`,
//! `publicKey` and a bare `key` (a taint's, a label's) are not credentials. A VM's cloud-init
//! payload (`cloudInit`, `userData`) is where its passwords are written, and is hidden too.

use super::secret_text::redact_text;
use serde_json::Value;

/// What stands where a secret was.
pub const REDACTED: &str = "<redacted by restorewatch>";

/// Words that are a credential by themselves.
const CREDENTIAL_WORDS: &[&str] = &[
    "password",
    "passwords",
    "passwd",
    "pass",
    "pwd",
    "passphrase",
    "secret",
    "secrets",
    "token",
    "tokens",
    "credential",
    "credentials",
    "creds",
    "apikey",
    "accesskey",
    "secretkey",
    "privatekey",
    "htpasswd",
    "bearer",
    "authorization",
    "dsn",
];

/// Words that hold a credential when they end the key (`auth`, `basicAuth`), but only describe
/// one elsewhere (`authType`, `authMethod`).
const CREDENTIAL_LAST_WORDS: &[&str] = &["auth"];

/// Words that make a following `key` a credential (`apiKey`, `s3AccessKey`, `tls.key`).
const KEY_QUALIFIERS: &[&str] = &[
    "access",
    "account",
    "api",
    "auth",
    "client",
    "encryption",
    "gpg",
    "hmac",
    "license",
    "master",
    "pgp",
    "private",
    "restic",
    "secret",
    "session",
    "shared",
    "signing",
    "ssh",
    "tls",
];

/// Word pairs that name a cloud-init payload (`cloudInit`, `userData`, `userDataBase64`): the
/// text where a VM's passwords and `chpasswd` lists are written.
const PAYLOAD_PAIRS: &[(&str, &str)] = &[("cloud", "init"), ("user", "data")];

/// Last words of a key that describes or points at a credential rather than holding it.
const POINTER_WORDS: &[&str] = &[
    "name",
    "names",
    "ref",
    "refs",
    "selector",
    "namespace",
    "id",
    "file",
    "path",
];

/// `s3SecretKey` -> `s3`, `secret`, `key`; `APIKey` -> `api`, `key`; `tls.key` -> `tls`, `key`.
fn words(key: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in key.split(|c: char| !c.is_alphanumeric()) {
        let chars: Vec<char> = part.chars().collect();
        let mut cur = String::new();
        for (i, &c) in chars.iter().enumerate() {
            let prev = i.checked_sub(1).map(|p| chars[p]);
            let next = chars.get(i + 1).copied();
            let boundary = c.is_uppercase()
                && prev.is_some_and(|p| {
                    p.is_lowercase()
                        || p.is_ascii_digit()
                        || (p.is_uppercase() && next.is_some_and(char::is_lowercase))
                });
            if boundary && !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            cur.extend(c.to_lowercase());
        }
        if !cur.is_empty() {
            out.push(cur);
        }
    }
    out
}

fn is_pointer_key(key: &str) -> bool {
    words(key)
        .last()
        .is_some_and(|w| POINTER_WORDS.contains(&w.as_str()))
}

/// Keys remembered per thread by `is_credential_key`: a cluster repeats the same few hundred
/// field names in every object, and splitting each into words again was a third of reading a
/// real server's 20,000 objects. Bounded: a hostile object's made-up keys only flush it.
const KEY_MEMO_MAX: usize = 4096;

thread_local! {
    static KEY_MEMO: std::cell::RefCell<std::collections::HashMap<Box<str>, bool>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// Whether the value under `key` is a credential.
pub fn is_credential_key(key: &str) -> bool {
    if key.len() > 128 {
        return credential_key_uncached(key);
    }
    let known = KEY_MEMO.with(|m| m.borrow().get(key).copied());
    if let Some(known) = known {
        return known;
    }
    let answer = credential_key_uncached(key);
    KEY_MEMO.with(|m| {
        let mut m = m.borrow_mut();
        if m.len() >= KEY_MEMO_MAX {
            m.clear();
        }
        m.insert(key.into(), answer);
    });
    answer
}

fn credential_key_uncached(key: &str) -> bool {
    let w = words(key);
    if w.is_empty() || is_pointer_key(key) {
        return false;
    }
    // A file name's `.key` (`server.key`, `ca.key`): a private key's usual name. Not a label
    // or annotation key's last path segment (`sharding.fluxcd.io/key`): that names a key.
    let file = key.rsplit('/').next().unwrap_or(key);
    let key_file = file.len() > 4 && file.to_ascii_lowercase().ends_with(".key");
    let last_word = w
        .last()
        .is_some_and(|l| CREDENTIAL_LAST_WORDS.contains(&l.as_str()));
    key_file
        || last_word
        || w.iter().enumerate().any(|(i, word)| {
            let prev = i.checked_sub(1).map(|p| w[p].as_str());
            CREDENTIAL_WORDS.contains(&word.as_str())
                || ((word == "key" || word == "keys")
                    && prev.is_some_and(|p| KEY_QUALIFIERS.contains(&p)))
                || prev.is_some_and(|p| PAYLOAD_PAIRS.contains(&(p, word.as_str())))
        })
}

/// Replaces, anywhere below `v`, the value of every credential key with [`REDACTED`], the
/// `value` of every `{name, value}` entry whose name names one (`env: [{name: DB_PASSWORD,
/// value: ...}]`), and the credentials written inside strings (see `secret_text`).
pub fn redact_credentials(v: &mut Value) {
    match v {
        Value::Object(map) => {
            let named_secret = map
                .get("name")
                .and_then(Value::as_str)
                .is_some_and(is_credential_key);
            for (k, child) in map.iter_mut() {
                if is_credential_key(k) || (named_secret && k == "value") {
                    redact_inside(child);
                } else {
                    redact_credentials(child);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_credentials),
        Value::String(s) => {
            if let Some(clean) = redact_text(s) {
                *s = clean;
            }
        }
        _ => {}
    }
}

/// Below a credential key every value is secret (`secrets: {db: ...}`), except what only points
/// at one (`s3CredentialsSecret: {name: ...}`): the shape stays, the values go.
fn redact_inside(v: &mut Value) {
    match v {
        Value::Null => {}
        Value::Object(map) => {
            for (k, child) in map.iter_mut() {
                if !is_pointer_key(k) {
                    redact_inside(child);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_inside),
        _ => *v = Value::String(REDACTED.into()),
    }
}

/// Hides, in an object about to be kept for display, what must never reach a screen, a log or
/// `/report`: a Backup's `underlyingResources` (a CNPG snapshot carries user passwords), every
/// value of a Secret's `data` and `stringData` (the keys stay: they say what the Secret holds),
/// and in every kind the credentials `redact_credentials` finds (an app's or a HelmRelease's
/// values, a VM's cloud-init, a container's env, a DSN in a CNPG Cluster's parameters).
pub fn redact_for_display(v: &mut Value) {
    let api_version = v.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    let kind = v.get("kind").and_then(Value::as_str).unwrap_or("");
    match (group, kind) {
        ("backups.cozystack.io", "Backup") => {
            if let Some(status) = v.get_mut("status").and_then(Value::as_object_mut)
                && status.contains_key("underlyingResources")
            {
                status.insert("underlyingResources".into(), Value::String(REDACTED.into()));
            }
        }
        ("", "Secret") => {
            for field in ["data", "stringData"] {
                if let Some(map) = v.get_mut(field).and_then(Value::as_object_mut) {
                    map.values_mut()
                        .for_each(|x| *x = Value::String(REDACTED.into()));
                }
            }
        }
        _ => {}
    }
    redact_credentials(v);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_that_name_credentials_are_told_apart_from_keys_that_do_not() {
        let credentials = [
            "password",
            "Password",
            "resticPassword",
            "MYSQL_ROOT_PASSWORD",
            "passwd",
            "passphrase",
            "secret",
            "clientSecret",
            "existingSecret",
            "token",
            "authToken",
            "bearer-token",
            "credentials",
            "s3Credentials",
            "creds",
            "apiKey",
            "APIKey",
            "api_key",
            "apikey",
            "s3AccessKey",
            "s3SecretKey",
            "secretAccessKey",
            "AWS_SECRET_ACCESS_KEY",
            "accessKey",
            "privateKey",
            "tls.key",
            "sshKeys",
            "encryptionKey",
            "dbPass",
            "cloudInit",
            "cloudInitNoCloud",
            "userData",
            "userDataBase64",
            "htpasswd",
            "auth",
            "basicAuth",
            "server.key",
            "ca.key",
            "example.com/tls.key",
            "sentryDsn",
            "DATABASE_DSN",
            "bearer",
            "Authorization",
        ];
        let not_credentials = [
            "keepOriginalPVC",
            "monkey",
            "key",
            "keys",
            "keyboard",
            "publicKey",
            "hotkey",
            "secretName",
            "passwordSecretRef",
            "secretKeyRef",
            "accessKeyId",
            "tokenFile",
            "bypass",
            "passthrough",
            "username",
            "newServerName",
            "serverName",
            "keepAliveSeconds",
            "tokenization",
            "networkData",
            "userName",
            "dataSource",
            "userDataSecretRef",
            "authType",
            "authentication",
            "key.name",
            "sharding.fluxcd.io/key",
            "example.com/key",
            "",
        ];
        for k in credentials {
            assert!(is_credential_key(k), "{k:?} holds a credential");
        }
        for k in not_credentials {
            assert!(!is_credential_key(k), "{k:?} is not a credential");
        }
    }

    #[test]
    fn an_app_spec_keeps_its_shape_and_loses_its_passwords() {
        let mut v = json!({
            "apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres",
            "metadata": {"name": "orders"},
            "spec": {
                "users": {"alice": {"password": "hunter2", "replication": true}},
                "backup": {"s3AccessKey": "AKIA1", "s3SecretKey": "s3cr3t", "resticPassword": "r3stic",
                           "s3Bucket": "b"},
                "bootstrap": {"newServerName": "postgres-orders-restore-1", "keepOriginalPVC": true},
                "list": [{"token": "t0k"}, {"key": "node-role"}],
                "s3CredentialsSecret": {"name": "orders-backup-creds"},
                "secrets": {"db": "dbpw", "nested": ["arr-pw"], "secretName": "kept"},
                "credentials": {"accessKeyId": {"name": "c", "key": "ID"},
                                "secretAccessKey": {"name": "c", "key": "SECRET_KEY_NAME"}},
                "emptyOne": null
            }
        });
        redact_for_display(&mut v);
        let s = v.to_string();
        for planted in [
            "hunter2",
            "AKIA1",
            "s3cr3t",
            "r3stic",
            "t0k",
            "dbpw",
            "arr-pw",
            "SECRET_KEY_NAME",
        ] {
            assert!(!s.contains(planted), "{planted} shown: {s}");
        }
        assert_eq!(v["spec"]["users"]["alice"]["password"], REDACTED);
        assert_eq!(v["spec"]["users"]["alice"]["replication"], true);
        assert_eq!(v["spec"]["backup"]["s3Bucket"], "b");
        assert_eq!(
            v["spec"]["bootstrap"]["newServerName"],
            "postgres-orders-restore-1"
        );
        assert_eq!(v["spec"]["list"][1]["key"], "node-role");
        assert!(v["spec"]["emptyOne"].is_null());
        // What only points at a credential stays visible: which Secret, which key id.
        assert_eq!(
            v["spec"]["s3CredentialsSecret"]["name"],
            "orders-backup-creds"
        );
        assert_eq!(v["spec"]["secrets"]["secretName"], "kept");
        assert_eq!(v["spec"]["credentials"]["accessKeyId"]["key"], "ID");
        assert_eq!(v["spec"]["credentials"]["secretAccessKey"]["name"], "c");
    }

    #[test]
    fn env_entries_strings_and_urls_of_any_kind_are_redacted() {
        let mut cluster = json!({
            "apiVersion": "postgresql.cnpg.io/v1", "kind": "Cluster", "metadata": {"name": "pg"},
            "spec": {
                "env": [{"name": "DB_PASSWORD", "value": "env-pw"}, {"name": "TZ", "value": "UTC"},
                        {"name": "API_TOKEN", "valueFrom": {"secretKeyRef": {"name": "s", "key": "t"}}}],
                "postgresql": {"parameters": {"primary_conninfo": "host=a user=r password=dsn-pw"}},
                "externalClusters": [{"name": "origin",
                    "connectionString": "postgres://app:url-pw@origin:5432/db"}],
                "config": "listen: 1\nhtpasswd: admin:$apr1$hash-pw\n",
                "proxy": {"auth": "basic-pw", "authType": "basic"}
            }
        });
        redact_for_display(&mut cluster);
        let s = cluster.to_string();
        for planted in ["env-pw", "dsn-pw", "url-pw", "hash-pw", "basic-pw"] {
            assert!(!s.contains(planted), "{planted} shown: {s}");
        }
        let spec = &cluster["spec"];
        assert_eq!(spec["env"][0]["name"], "DB_PASSWORD");
        assert_eq!(spec["env"][1]["value"], "UTC");
        assert_eq!(spec["env"][2]["valueFrom"]["secretKeyRef"]["name"], "s");
        assert_eq!(
            spec["externalClusters"][0]["connectionString"],
            format!("postgres://app:{REDACTED}@origin:5432/db")
        );
        assert_eq!(spec["proxy"]["authType"], "basic");
    }

    #[test]
    fn a_vms_cloud_init_is_redacted_and_its_secret_reference_kept() {
        let mut vm = json!({
            "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "vm1"},
            "spec": {"runStrategy": "Always", "template": {"spec": {"volumes": [
                {"name": "cloudinitdisk", "cloudInitNoCloud": {
                    "userData": "#cloud-config\npassword: vm-pw\nchpasswd: {expire: false}",
                    "networkData": "version: 2"}},
                {"name": "ci2", "cloudInitConfigDrive": {"userDataSecretRef": {"name": "vm1-ud"}}},
                {"name": "system", "dataVolume": {"name": "vm-disk-system"}}
            ]}}}
        });
        redact_for_display(&mut vm);
        assert!(!vm.to_string().contains("vm-pw"), "{vm}");
        let vols = &vm["spec"]["template"]["spec"]["volumes"];
        assert_eq!(vols[0]["cloudInitNoCloud"]["userData"], REDACTED);
        assert_eq!(
            vols[1]["cloudInitConfigDrive"]["userDataSecretRef"]["name"],
            "vm1-ud"
        );
        assert_eq!(vols[2]["dataVolume"]["name"], "vm-disk-system");
        assert_eq!(vm["spec"]["runStrategy"], "Always");

        // A VMInstance app's HelmRelease carries the same payload in its values.
        let mut hr = json!({
            "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
            "metadata": {"name": "vm-instance-vm1"},
            "spec": {"values": {"cloudInit": "#cloud-config\npassword: hr-pw", "sshKeys": ["ssh-ed25519 AAA"],
                                "instanceType": "u1.medium"}}
        });
        redact_for_display(&mut hr);
        assert_eq!(hr["spec"]["values"]["cloudInit"], REDACTED);
        assert_eq!(hr["spec"]["values"]["sshKeys"][0], REDACTED);
        assert_eq!(hr["spec"]["values"]["instanceType"], "u1.medium");
    }

    #[test]
    fn helmrelease_values_secret_data_and_backup_resources_are_redacted() {
        let mut hr = json!({
            "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
            "metadata": {"name": "postgres-orders"},
            "spec": {"suspend": true, "values": {"users": {"bob": {"password": "pw-bob"}}},
                     "valuesFrom": [{"kind": "Secret", "name": "orders-values"}]}
        });
        redact_for_display(&mut hr);
        assert_eq!(hr["spec"]["values"]["users"]["bob"]["password"], REDACTED);
        assert_eq!(hr["spec"]["valuesFrom"][0]["name"], "orders-values");
        assert_eq!(hr["spec"]["suspend"], true);

        let mut secret = json!({
            "apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
            "data": {"password": "aHVudGVyMg==", "username": "YWxpY2U="},
            "stringData": {"token": "plain"}
        });
        redact_for_display(&mut secret);
        assert_eq!(secret["data"]["password"], REDACTED);
        assert_eq!(secret["data"]["username"], REDACTED);
        assert_eq!(secret["stringData"]["token"], REDACTED);

        let mut backup = json!({
            "apiVersion": "backups.cozystack.io/v1alpha1", "kind": "Backup",
            "metadata": {"name": "b"}, "status": {"underlyingResources": {"password": "x"}, "phase": "Ready"}
        });
        redact_for_display(&mut backup);
        assert_eq!(backup["status"]["underlyingResources"], REDACTED);
        assert_eq!(backup["status"]["phase"], "Ready");
    }
}
