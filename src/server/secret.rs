//! The password of a managed server. Every instance gets its own, from the operating system's
//! random numbers, so no other local user can log in to a server dbperf started (PostgreSQL
//! `COPY ... TO PROGRAM` would otherwise run their commands as the server's OS user). It is
//! kept in 0600 files in the instance's directory, owned by whoever runs dbperf, and handed to
//! the server through files too: never on a command line (other users read argv in /proc),
//! never in results, logs or reports.

use std::fs;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::process::User;

/// The password alone, one line.
pub const PASSWORD_FILE: &str = "password";
/// PostgreSQL: a password file for libpq clients (`PGPASSFILE=<dir>/pgpass psql ...`).
pub const PGPASS_FILE: &str = "pgpass";
/// MariaDB/MySQL: an option file for the command-line client (`mariadb --defaults-file=...`).
pub const CLIENT_CNF: &str = "client.cnf";

/// Random bytes in a password: 128 bits, written as 32 hex digits, which need no quoting in
/// SQL, a pgpass line or an option file.
const BYTES: usize = 16;

/// A server's password. Its `Debug` shows no secret, so a stray `{:?}` cannot leak it.
#[derive(Clone, PartialEq)]
pub struct Password(String);

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Password(..)")
    }
}

impl Password {
    /// A new password from the operating system's random numbers.
    pub fn generate() -> anyhow::Result<Password> {
        let mut b = [0u8; BYTES];
        getrandom::fill(&mut b)
            .map_err(|e| anyhow::anyhow!("cannot get random numbers for a password: {e}"))?;
        Ok(Password(b.iter().map(|x| format!("{x:02x}")).collect()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// `text` (a server's log, a tool's output) with the password blotted out, for messages
    /// that end up in results.
    pub fn redact(&self, text: &str) -> String {
        text.replace(&self.0, "(password)")
    }
}

/// Writes `text` to a new file `name` in `dir`, mode 0600, owned by `owner` when given (a
/// secret the server's user must read) and else by whoever runs dbperf. An old file of that
/// name is unlinked first (unlinking never follows a link) and the new one is created with
/// O_EXCL | O_NOFOLLOW, so nothing planted there is written through: a name taken again in
/// between is an error.
pub fn write_private(
    dir: &Path,
    name: &str,
    text: &str,
    owner: Option<&User>,
) -> anyhow::Result<PathBuf> {
    let path = dir.join(name);
    match fs::remove_file(&path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => anyhow::bail!("cannot replace {}: {e}", path.display()),
    }
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", path.display()))?;
    if let Some(u) = owner {
        std::os::unix::fs::fchown(&f, Some(u.uid), Some(u.gid))
            .map_err(|e| anyhow::anyhow!("cannot give {} to {}: {e}", path.display(), u.name))?;
    }
    f.write_all(text.as_bytes())
        .and_then(|_| f.sync_all())
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

/// A secret file the server reads once (initdb's password file, mysqld's init file): removed
/// when this is dropped, whatever happened in between.
pub struct Scratch(PathBuf);

impl Scratch {
    pub fn write(dir: &Path, name: &str, text: &str, owner: Option<&User>) -> anyhow::Result<Self> {
        write_private(dir, name, text, owner).map(Scratch)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}

/// The files a person uses to connect to the instance in `dir` by hand: the password, and the
/// client's own password or option file, each 0600 and owned by whoever runs dbperf.
#[derive(Debug, Clone)]
pub struct ClientFiles {
    pub password: PathBuf,
    /// `pgpass` or `client.cnf`.
    pub client: PathBuf,
}

/// How a client reaches the instance, for its client file.
pub struct Reach<'a> {
    pub user: &'a str,
    pub port: u16,
    pub socket: &'a Path,
}

/// A client's password or option file (its flavor's: `pgpass`, `client.cnf`): its name in
/// the instance's directory and its text.
pub struct ClientFile {
    pub name: &'static str,
    pub text: String,
}

pub fn write_client_files(
    dir: &Path,
    pw: &Password,
    client: &ClientFile,
) -> anyhow::Result<ClientFiles> {
    let password = write_private(dir, PASSWORD_FILE, &format!("{}\n", pw.as_str()), None)?;
    let client = write_private(dir, client.name, &client.text, None)?;
    Ok(ClientFiles { password, client })
}

/// A pgpass entry for each way libpq names this server: TCP on 127.0.0.1, and the socket
/// directory (as `-h DIR` names it, and `localhost` for a client whose default directory it is).
pub fn pgpass(pw: &Password, r: &Reach) -> ClientFile {
    let dir = r
        .socket
        .parent()
        .map(|d| d.to_string_lossy().to_string())
        .unwrap_or_default();
    // pgpass fields escape ':' and '\' with a backslash.
    let dir = dir.replace('\\', "\\\\").replace(':', "\\:");
    let mut out = String::new();
    for host in ["127.0.0.1", "localhost", &dir] {
        out.push_str(&format!("{host}:{}:*:{}:{}\n", r.port, r.user, pw.as_str()));
    }
    ClientFile {
        name: PGPASS_FILE,
        text: out,
    }
}

/// A `[client]` option file: the command-line client reads only it (`--defaults-file`), so
/// nothing from /etc/mysql is mixed in, and finds the user, password and address there.
pub fn client_cnf(pw: &Password, r: &Reach) -> ClientFile {
    let text = format!(
        "[client]\nuser={}\npassword={}\nhost=127.0.0.1\nport={}\nsocket={}\n",
        r.user,
        pw.as_str(),
        r.port,
        r.socket.display()
    );
    ClientFile {
        name: CLIENT_CNF,
        text,
    }
}

/// SQL run by a MySQL-family server before it takes its first connection (mysqld
/// `--init-file`): every `root` account gets the password, and anonymous accounts (which
/// older mariadb-install-db makes) go. Written generically, since which root accounts the
/// install step made (localhost, 127.0.0.1, ::1, the host's name) differs between versions.
pub fn mysql_init_sql(pw: &Password) -> String {
    format!(
        "SET @dbperf_pw = '{}';\n\
         SELECT GROUP_CONCAT(CONCAT(QUOTE(User), '@', QUOTE(Host), ' IDENTIFIED BY ', \
         QUOTE(@dbperf_pw))) INTO @dbperf_roots FROM mysql.user WHERE User = 'root';\n\
         SET @dbperf_sql = CONCAT('ALTER USER ', @dbperf_roots);\n\
         PREPARE dbperf_stmt FROM @dbperf_sql;\n\
         EXECUTE dbperf_stmt;\n\
         DEALLOCATE PREPARE dbperf_stmt;\n\
         SELECT GROUP_CONCAT(CONCAT(QUOTE(User), '@', QUOTE(Host))) INTO @dbperf_anon \
         FROM mysql.user WHERE User = '';\n\
         SET @dbperf_sql = IF(@dbperf_anon IS NULL, 'DO 0', CONCAT('DROP USER ', @dbperf_anon));\n\
         PREPARE dbperf_stmt FROM @dbperf_sql;\n\
         EXECUTE dbperf_stmt;\n\
         DEALLOCATE PREPARE dbperf_stmt;\n\
         SET @dbperf_pw = NULL;\n",
        pw.as_str()
    )
}

/// MySQL's `--initialize-insecure` makes one root account, root@localhost; its init file
/// (read before the data directory ever takes a connection) gives it the password.
pub fn mysql_initialize_sql(pw: &Password) -> String {
    format!(
        "ALTER USER 'root'@'localhost' IDENTIFIED BY '{}';\n",
        pw.as_str()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    #[test]
    fn passwords_are_long_random_and_never_debug_printed() {
        let a = Password::generate().unwrap();
        let b = Password::generate().unwrap();
        assert_ne!(a, b);
        assert_eq!(a.as_str().len(), 32);
        assert!(a.as_str().bytes().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(format!("{a:?}"), "Password(..)");
        let log = format!("ERROR: ALTER USER root IDENTIFIED BY '{}'", a.as_str());
        assert!(!a.redact(&log).contains(a.as_str()));
        assert!(a.redact(&log).contains("(password)"));
    }

    #[test]
    fn a_secret_file_is_new_private_and_never_written_through_a_link() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        fs::write(&victim, "keep").unwrap();
        std::os::unix::fs::symlink(&victim, d.path().join("password")).unwrap();
        let p = write_private(d.path(), "password", "s3cret\n", None).unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "keep");
        let m = fs::symlink_metadata(&p).unwrap();
        assert!(m.file_type().is_file());
        assert_eq!(m.permissions().mode() & 0o777, 0o600);
        // SAFETY: geteuid has no preconditions.
        assert_eq!(m.uid(), unsafe { libc::geteuid() });
        assert_eq!(fs::read_to_string(&p).unwrap(), "s3cret\n");
    }

    #[test]
    fn client_files_name_the_instance_and_escape_the_socket_directory() {
        let pw = Password("0123456789abcdef0123456789abcdef".into());
        let sock = Path::new("/t/a:b/run/.s.PGSQL.5432");
        let r = Reach {
            user: "dbperf",
            port: 5432,
            socket: sock,
        };
        let text = pgpass(&pw, &r).text;
        assert!(text.contains(&format!("127.0.0.1:5432:*:dbperf:{}\n", pw.as_str())));
        assert!(text.contains("/t/a\\:b/run:5432:*:dbperf:"), "{text}");
        let cnf = client_cnf(
            &pw,
            &Reach {
                user: "root",
                port: 3306,
                socket: Path::new("/t/run/mysqld.sock"),
            },
        )
        .text;
        assert!(
            cnf.starts_with("[client]\nuser=root\npassword=0123"),
            "{cnf}"
        );
        assert!(cnf.contains("port=3306\n"), "{cnf}");
    }
}
