//! Who may connect: no authentication, or basic authentication against users configured at
//! server start (names and passwords held in memory; nothing is stored on disk).
//!
//! With [`Auth::None`] any credentials are accepted, including none. With [`Auth::Basic`] the
//! client must send scheme `basic` with a configured user's name and password; the password
//! comparison takes the same time wherever the first difference is.

/// A user allowed to log in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct User {
    pub name: String,
    pub password: String,
}

impl User {
    /// Parses `NAME:PASSWORD` (the password may itself contain `:`).
    pub fn parse(spec: &str) -> Result<User, String> {
        match spec.split_once(':') {
            Some((name, password)) if !name.is_empty() && !password.is_empty() => Ok(User {
                name: name.to_owned(),
                password: password.to_owned(),
            }),
            _ => Err(format!(
                "expected NAME:PASSWORD with both parts non-empty, got '{spec}'"
            )),
        }
    }
}

/// The server's authentication policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Auth {
    /// Everyone may connect (`--no-auth`).
    None,
    /// Scheme `basic` with one of these users.
    Basic(Vec<User>),
}

impl Auth {
    pub fn accepts(&self, scheme: &str, principal: &str, credentials: &str) -> bool {
        match self {
            Auth::None => true,
            Auth::Basic(users) => {
                scheme == "basic"
                    && users.iter().any(|user| {
                        user.name == principal
                            && same_secret(user.password.as_bytes(), credentials.as_bytes())
                    })
            }
        }
    }
}

/// Equality whose time does not depend on where the inputs differ.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    let longest = a.len().max(b.len());
    let mut difference = (a.len() != b.len()) as u8;
    for i in 0..longest {
        difference |= a.get(i).copied().unwrap_or(0) ^ b.get(i).copied().unwrap_or(0);
    }
    difference == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_auth_checks_scheme_user_and_password() {
        let auth = Auth::Basic(vec![User::parse("ada:s3:cret").expect("valid")]);
        assert!(auth.accepts("basic", "ada", "s3:cret"));
        assert!(!auth.accepts("basic", "ada", "s3:cre"));
        assert!(!auth.accepts("basic", "ada", "s3:cret!"));
        assert!(!auth.accepts("basic", "bob", "s3:cret"));
        assert!(!auth.accepts("none", "ada", "s3:cret"));
        assert!(Auth::None.accepts("none", "", ""));
        assert!(User::parse("ada").is_err());
        assert!(User::parse(":pw").is_err());
    }
}
