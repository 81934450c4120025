//! Lexer: Cypher source text → a vector of tokens with positions.
//!
//! TOKENS
//! ======
//! The lexer turns the whole query into a `Vec<Token>` up front, ending with exactly one
//! `TokenKind::Eof`. Queries are small (kilobytes), so lexing eagerly keeps the parser a plain
//! cursor over a slice with unlimited lookahead, which the pattern/expression disambiguation in
//! the parser relies on.
//!
//! Every token carries a [`Span`]: byte offsets `[start, end)` into the source plus the 1-based
//! line and column (counted in characters) of its first character.
//!
//! WORDS AND KEYWORDS
//! ==================
//! Keywords are not separate token kinds. A bare word is `Ident` and a backquoted word is
//! `QuotedIdent`; the parser asks `Token::is_keyword("MATCH")`, which matches only *bare* words,
//! ASCII case-insensitively. This is what lets Cypher use keywords as label names, property keys
//! and map keys (`n.count`, `{end: 1}`), and lets a backquoted `` `MATCH` `` be an ordinary name.
//! Inside backquotes a doubled backquote stands for one: `` `a``b` `` is the name ``a`b``.
//!
//! OPERATORS
//! =========
//! Arrows are *not* single tokens: `-->` lexes as `-` `-` `>` and `<-[` as `<` `-` `[`. The
//! openCypher grammar allows whitespace between an arrow head and its dash, and `x<-1` must stay
//! "x less than minus one", so the pattern parser assembles arrows from `<`, `-` and `>`.
//! Multi-character operators that *are* tokens: `<>`, `<=`, `>=`, `=~`, `+=`, `..`.
//! `!=` is not Cypher; it is reported with a hint to use `<>`.
//!
//! NUMBERS
//! =======
//! Integers are lexed to their unsigned magnitude (`u64`): the sign is a separate `-` token, and
//! only the parser knows whether `9223372036854775808` is the operand of a unary minus (then it
//! is `i64::MIN`) or an overflow. Forms: decimal, hex `0x1F`, octal `0o17`. Floats: `1.5`,
//! `.5`, `1e10`, `1.5E-3`; a float that rounds to infinity is an error. A `.` only starts a
//! fraction when a digit follows, so `1..3` is `1` `..` `3`. A number immediately followed by a
//! letter (`12ab`, `0x1G`) is an invalid number literal, not two tokens.
//!
//! STRINGS
//! =======
//! Single- or double-quoted, with escapes `\\ \' \" \b \f \n \r \t \uXXXX \UXXXXXXXX`; a UTF-16
//! surrogate pair written as two `\u` escapes is combined. Any other escape is an error.
//!
//! COMMENTS
//! ========
//! `// to end of line` and `/* block */` (not nested) are skipped like whitespace.

use crate::ast::Span;
use crate::error::{ParseError, ParseErrorKind};

/// One lexical token.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub kind: TokenKind,
    pub span: Span,
}

/// The kinds of token. Keywords are `Ident`s; see the module documentation.
#[derive(Debug, Clone, PartialEq)]
pub enum TokenKind {
    /// A bare word: identifier or keyword.
    Ident(String),
    /// A backquoted name, with ```` `` ```` unescaped; never a keyword.
    QuotedIdent(String),
    /// An integer literal's magnitude (the sign is a separate token).
    Integer(u64),
    Float(f64),
    String(String),
    /// `$name` or `$0`; holds the name without the `$`.
    Parameter(String),
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Comma,
    Dot,
    DotDot,
    Colon,
    Semicolon,
    Pipe,
    /// `&`, only in label expressions
    Amp,
    /// `!`, only in label expressions (`!=` is refused with a hint)
    Bang,
    /// `$` directly before `(`: a dynamic label or type, `:$(expr)`
    Dollar,
    Eq,
    /// `<>`
    NotEq,
    Lt,
    Gt,
    Le,
    Ge,
    /// `=~`
    RegexMatch,
    Plus,
    /// `+=`
    PlusEq,
    Minus,
    Star,
    Slash,
    Percent,
    Caret,
    Eof,
}

impl Token {
    /// True if this is the bare (unquoted) word `keyword`, ignoring ASCII case.
    pub fn is_keyword(&self, keyword: &str) -> bool {
        matches!(&self.kind, TokenKind::Ident(word) if word.eq_ignore_ascii_case(keyword))
    }
}

impl TokenKind {
    /// How the token reads in an error message: `'RETURN'`, `')'`, `end of input`.
    pub fn describe(&self) -> String {
        match self {
            TokenKind::Ident(word) => format!("'{word}'"),
            TokenKind::QuotedIdent(word) => format!("'`{}`'", word.replace('`', "``")),
            TokenKind::Integer(value) => format!("'{value}'"),
            TokenKind::Float(value) => format!("'{value:?}'"),
            TokenKind::String(_) => "a string literal".to_string(),
            TokenKind::Parameter(name) => format!("'${name}'"),
            TokenKind::Eof => "end of input".to_string(),
            other => format!("'{}'", other.symbol()),
        }
    }

    /// The source text of a punctuation or operator token.
    fn symbol(&self) -> &'static str {
        match self {
            TokenKind::LParen => "(",
            TokenKind::RParen => ")",
            TokenKind::LBracket => "[",
            TokenKind::RBracket => "]",
            TokenKind::LBrace => "{",
            TokenKind::RBrace => "}",
            TokenKind::Comma => ",",
            TokenKind::Dot => ".",
            TokenKind::DotDot => "..",
            TokenKind::Colon => ":",
            TokenKind::Semicolon => ";",
            TokenKind::Pipe => "|",
            TokenKind::Amp => "&",
            TokenKind::Bang => "!",
            TokenKind::Dollar => "$",
            TokenKind::Eq => "=",
            TokenKind::NotEq => "<>",
            TokenKind::Lt => "<",
            TokenKind::Gt => ">",
            TokenKind::Le => "<=",
            TokenKind::Ge => ">=",
            TokenKind::RegexMatch => "=~",
            TokenKind::Plus => "+",
            TokenKind::PlusEq => "+=",
            TokenKind::Minus => "-",
            TokenKind::Star => "*",
            TokenKind::Slash => "/",
            TokenKind::Percent => "%",
            TokenKind::Caret => "^",
            TokenKind::Ident(_)
            | TokenKind::QuotedIdent(_)
            | TokenKind::Integer(_)
            | TokenKind::Float(_)
            | TokenKind::String(_)
            | TokenKind::Parameter(_)
            | TokenKind::Eof => "",
        }
    }
}

/// Lexes `source` completely. The result always ends with one `Eof` token.
pub fn tokenize(source: &str) -> Result<Vec<Token>, ParseError> {
    let mut lexer = Lexer {
        source,
        offset: 0,
        line: 1,
        column: 1,
    };
    let mut tokens: Vec<Token> = Vec::new();
    // Innermost open bracket, so that a map key position is known (see `in_key_position`).
    let mut open: Vec<TokenKind> = Vec::new();
    loop {
        lexer.skip_trivia()?;
        let token = lexer
            .next_token()
            .map_err(|e| key_position_error(e, &open, tokens.last()))?;
        match token.kind {
            TokenKind::LParen | TokenKind::LBracket | TokenKind::LBrace => {
                open.push(token.kind.clone())
            }
            TokenKind::RParen | TokenKind::RBracket | TokenKind::RBrace => drop(open.pop()),
            _ => {}
        }
        let done = token.kind == TokenKind::Eof;
        tokens.push(token);
        if done {
            return Ok(tokens);
        }
    }
}

/// A bad number literal where a map key is expected (`{1B2c3e67: 1}`) is a syntax error of
/// the map — a key cannot start with a digit — rather than a malformed number.
fn key_position_error(error: ParseError, open: &[TokenKind], last: Option<&Token>) -> ParseError {
    let after_brace_or_comma =
        last.is_some_and(|t| matches!(t.kind, TokenKind::LBrace | TokenKind::Comma));
    match error.kind {
        ParseErrorKind::InvalidNumberLiteral { literal }
            if open.last() == Some(&TokenKind::LBrace) && after_brace_or_comma =>
        {
            ParseError::new(
                ParseErrorKind::Unexpected {
                    expected: "a property key name".into(),
                    found: format!("'{literal}'"),
                },
                error.span,
            )
        }
        kind => ParseError::new(kind, error.span),
    }
}

/// True for characters that may start a bare identifier.
pub fn is_ident_start(ch: char) -> bool {
    ch == '_' || ch.is_alphabetic()
}

/// True for characters that may continue a bare identifier.
pub fn is_ident_continue(ch: char) -> bool {
    ch == '_' || ch.is_alphanumeric()
}

struct Lexer<'a> {
    source: &'a str,
    /// Byte offset of the next unread character.
    offset: usize,
    /// 1-based line of the next unread character.
    line: u32,
    /// 1-based column (in characters) of the next unread character.
    column: u32,
}

/// Where a token starts; turned into a [`Span`] once its end is known.
#[derive(Clone, Copy)]
struct Mark {
    offset: usize,
    line: u32,
    column: u32,
}

impl<'a> Lexer<'a> {
    fn peek(&self) -> Option<char> {
        self.source[self.offset..].chars().next()
    }

    fn peek_nth(&self, n: usize) -> Option<char> {
        self.source[self.offset..].chars().nth(n)
    }

    fn bump(&mut self) -> Option<char> {
        let ch = self.peek()?;
        self.offset += ch.len_utf8();
        if ch == '\n' {
            self.line += 1;
            self.column = 1;
        } else {
            self.column += 1;
        }
        Some(ch)
    }

    fn mark(&self) -> Mark {
        Mark {
            offset: self.offset,
            line: self.line,
            column: self.column,
        }
    }

    fn span_from(&self, mark: Mark) -> Span {
        Span::new(mark.offset, self.offset, mark.line, mark.column)
    }

    fn error_at(&self, mark: Mark, kind: ParseErrorKind) -> ParseError {
        ParseError::new(kind, self.span_from(mark))
    }

    /// Skips whitespace and comments.
    fn skip_trivia(&mut self) -> Result<(), ParseError> {
        loop {
            match (self.peek(), self.peek_nth(1)) {
                (Some(ch), _) if ch.is_whitespace() => {
                    self.bump();
                }
                (Some('/'), Some('/')) => {
                    while let Some(ch) = self.peek() {
                        if ch == '\n' {
                            break;
                        }
                        self.bump();
                    }
                }
                (Some('/'), Some('*')) => {
                    let mark = self.mark();
                    self.bump();
                    self.bump();
                    loop {
                        match self.bump() {
                            Some('*') if self.peek() == Some('/') => {
                                self.bump();
                                break;
                            }
                            Some(_) => {}
                            None => {
                                return Err(
                                    self.error_at(mark, ParseErrorKind::UnterminatedComment)
                                );
                            }
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn next_token(&mut self) -> Result<Token, ParseError> {
        let mark = self.mark();
        let Some(ch) = self.peek() else {
            return Ok(Token {
                kind: TokenKind::Eof,
                span: self.span_from(mark),
            });
        };
        let kind = match ch {
            '`' => TokenKind::QuotedIdent(self.quoted_ident()?),
            '\'' | '"' => TokenKind::String(self.string()?),
            '$' => self.parameter()?,
            '0'..='9' => self.number()?,
            '.' if matches!(self.peek_nth(1), Some('0'..='9')) => self.number()?,
            ch if is_ident_start(ch) => {
                let word = self.word();
                TokenKind::Ident(word.to_string())
            }
            _ => self.operator()?,
        };
        Ok(Token {
            kind,
            span: self.span_from(mark),
        })
    }

    fn word(&mut self) -> &'a str {
        let start = self.offset;
        while self.peek().is_some_and(is_ident_continue) {
            self.bump();
        }
        &self.source[start..self.offset]
    }

    fn quoted_ident(&mut self) -> Result<String, ParseError> {
        let mark = self.mark();
        self.bump(); // opening backquote
        let mut name = String::new();
        loop {
            match self.bump() {
                Some('`') if self.peek() == Some('`') => {
                    self.bump();
                    name.push('`');
                }
                Some('`') => return Ok(name),
                Some(ch) => name.push(ch),
                None => return Err(self.error_at(mark, ParseErrorKind::UnterminatedIdentifier)),
            }
        }
    }

    fn parameter(&mut self) -> Result<TokenKind, ParseError> {
        let mark = self.mark();
        self.bump(); // '$'
        match self.peek() {
            Some('(') => Ok(TokenKind::Dollar),
            Some('`') => Ok(TokenKind::Parameter(self.quoted_ident()?)),
            Some(ch) if is_ident_continue(ch) => Ok(TokenKind::Parameter(self.word().to_string())),
            _ => Err(self.error_at(
                mark,
                ParseErrorKind::Unexpected {
                    expected: "a parameter name after '$'".to_string(),
                    found: self
                        .peek()
                        .map_or("end of input".to_string(), |ch| format!("'{ch}'")),
                },
            )),
        }
    }

    fn string(&mut self) -> Result<String, ParseError> {
        let mark = self.mark();
        let Some(quote) = self.bump() else {
            return Err(self.error_at(mark, ParseErrorKind::UnterminatedString));
        };
        let mut value = String::new();
        loop {
            let escape_mark = self.mark();
            match self.bump() {
                None => return Err(self.error_at(mark, ParseErrorKind::UnterminatedString)),
                Some(ch) if ch == quote => return Ok(value),
                Some('\\') => {
                    let escaped = match self.bump() {
                        None => return Err(self.error_at(mark, ParseErrorKind::UnterminatedString)),
                        Some('\\') => '\\',
                        Some('\'') => '\'',
                        Some('"') => '"',
                        Some('b') => '\u{8}',
                        Some('f') => '\u{c}',
                        Some('n') => '\n',
                        Some('r') => '\r',
                        Some('t') => '\t',
                        Some('u') => self.unicode_escape(escape_mark, 4)?,
                        Some('U') => self.unicode_escape(escape_mark, 8)?,
                        Some(other) => {
                            return Err(self.error_at(
                                escape_mark,
                                ParseErrorKind::InvalidEscape {
                                    escape: format!("\\{other}"),
                                },
                            ));
                        }
                    };
                    value.push(escaped);
                }
                Some(ch) => value.push(ch),
            }
        }
    }

    /// Reads the hex digits of a `\u` (4) or `\U` (8) escape whose backslash is at `mark`.
    fn unicode_escape(&mut self, mark: Mark, digits: usize) -> Result<char, ParseError> {
        let code = self.hex_digits(mark, digits)?;
        if (0xD800..0xDC00).contains(&code) {
            // A high surrogate must be followed by `\u` and a low surrogate.
            if self.peek() == Some('\\') && self.peek_nth(1) == Some('u') {
                self.bump();
                self.bump();
                let low = self.hex_digits(mark, 4)?;
                if (0xDC00..0xE000).contains(&low) {
                    let combined = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                    if let Some(ch) = char::from_u32(combined) {
                        return Ok(ch);
                    }
                }
            }
            return Err(self.invalid_unicode(mark));
        }
        char::from_u32(code).ok_or_else(|| self.invalid_unicode(mark))
    }

    fn hex_digits(&mut self, mark: Mark, digits: usize) -> Result<u32, ParseError> {
        let mut code = 0u32;
        for _ in 0..digits {
            match self.peek().and_then(|ch| ch.to_digit(16)) {
                Some(digit) => {
                    self.bump();
                    code = code * 16 + digit;
                }
                None => return Err(self.invalid_unicode(mark)),
            }
        }
        Ok(code)
    }

    fn invalid_unicode(&self, mark: Mark) -> ParseError {
        // Show the character that broke the escape too, unless it ends the string.
        let end = match self.peek() {
            Some(ch) if ch != '\'' && ch != '"' => self.offset + ch.len_utf8(),
            _ => self.offset,
        };
        let escape = self.source[mark.offset..end].to_string();
        self.error_at(mark, ParseErrorKind::InvalidUnicodeLiteral { escape })
    }

    fn number(&mut self) -> Result<TokenKind, ParseError> {
        let mark = self.mark();
        let radix_prefix = match (self.peek(), self.peek_nth(1)) {
            (Some('0'), Some('x' | 'X')) => Some(16),
            (Some('0'), Some('o' | 'O')) => Some(8),
            _ => None,
        };
        if let Some(radix) = radix_prefix {
            self.bump();
            self.bump();
            let digits_start = self.offset;
            while self.peek().is_some_and(is_ident_continue) {
                self.bump();
            }
            let digits = &self.source[digits_start..self.offset];
            if digits.is_empty() || !digits.chars().all(|ch| ch.is_digit(radix)) {
                return Err(self.invalid_number(mark));
            }
            return self.integer(mark, digits, radix);
        }

        let digits_start = self.offset;
        self.eat_digits();
        let int_end = self.offset;
        let mut is_float = false;
        if self.peek() == Some('.') && matches!(self.peek_nth(1), Some('0'..='9')) {
            is_float = true;
            self.bump();
            self.eat_digits();
        }
        if matches!(self.peek(), Some('e' | 'E')) {
            let exponent_digits_at = match self.peek_nth(1) {
                Some('-' | '+') => 2,
                _ => 1,
            };
            if matches!(self.peek_nth(exponent_digits_at), Some('0'..='9')) {
                is_float = true;
                for _ in 0..exponent_digits_at {
                    self.bump();
                }
                self.eat_digits();
            }
        }
        // `12ab`, `1e`, `1.5x`: a number glued to letters is one bad literal, not two tokens.
        if self.peek().is_some_and(is_ident_continue) {
            while self.peek().is_some_and(is_ident_continue) {
                self.bump();
            }
            return Err(self.invalid_number(mark));
        }
        let text = &self.source[digits_start..self.offset];
        if is_float {
            return match text.parse::<f64>() {
                Ok(value) if value.is_finite() => Ok(TokenKind::Float(value)),
                Ok(_) => Err(self.error_at(
                    mark,
                    ParseErrorKind::FloatingPointOverflow {
                        literal: text.to_string(),
                    },
                )),
                Err(_) => Err(self.invalid_number(mark)),
            };
        }
        let digits = &self.source[digits_start..int_end];
        self.integer(mark, digits, 10)
    }

    fn eat_digits(&mut self) {
        while matches!(self.peek(), Some('0'..='9')) {
            self.bump();
        }
    }

    fn integer(&self, mark: Mark, digits: &str, radix: u32) -> Result<TokenKind, ParseError> {
        match u64::from_str_radix(digits, radix) {
            Ok(value) => Ok(TokenKind::Integer(value)),
            // Only overflow is possible here: the digits were validated by the caller.
            Err(_) => Err(self.error_at(
                mark,
                ParseErrorKind::IntegerOverflow {
                    literal: self.source[mark.offset..self.offset].to_string(),
                },
            )),
        }
    }

    fn invalid_number(&self, mark: Mark) -> ParseError {
        let literal = self.source[mark.offset..self.offset].to_string();
        self.error_at(mark, ParseErrorKind::InvalidNumberLiteral { literal })
    }

    fn operator(&mut self) -> Result<TokenKind, ParseError> {
        let mark = self.mark();
        let Some(first) = self.bump() else {
            return Ok(TokenKind::Eof);
        };
        let second = self.peek();
        let (kind, two_chars) = match (first, second) {
            ('(', _) => (TokenKind::LParen, false),
            (')', _) => (TokenKind::RParen, false),
            ('[', _) => (TokenKind::LBracket, false),
            (']', _) => (TokenKind::RBracket, false),
            ('{', _) => (TokenKind::LBrace, false),
            ('}', _) => (TokenKind::RBrace, false),
            (',', _) => (TokenKind::Comma, false),
            ('.', Some('.')) => (TokenKind::DotDot, true),
            ('.', _) => (TokenKind::Dot, false),
            (':', _) => (TokenKind::Colon, false),
            (';', _) => (TokenKind::Semicolon, false),
            ('|', _) => (TokenKind::Pipe, false),
            ('=', Some('~')) => (TokenKind::RegexMatch, true),
            ('=', _) => (TokenKind::Eq, false),
            ('<', Some('>')) => (TokenKind::NotEq, true),
            ('<', Some('=')) => (TokenKind::Le, true),
            ('<', _) => (TokenKind::Lt, false),
            ('>', Some('=')) => (TokenKind::Ge, true),
            ('>', _) => (TokenKind::Gt, false),
            ('+', Some('=')) => (TokenKind::PlusEq, true),
            ('+', _) => (TokenKind::Plus, false),
            ('-', _) => (TokenKind::Minus, false),
            ('*', _) => (TokenKind::Star, false),
            ('/', _) => (TokenKind::Slash, false),
            ('%', _) => (TokenKind::Percent, false),
            ('^', _) => (TokenKind::Caret, false),
            ('!', Some('=')) => {
                self.bump();
                return Err(self.error_at(mark, ParseErrorKind::BangEquals));
            }
            ('!', _) => (TokenKind::Bang, false),
            ('&', _) => (TokenKind::Amp, false),
            (other, _) => {
                return Err(self.error_at(mark, ParseErrorKind::UnexpectedCharacter { ch: other }));
            }
        };
        if two_chars {
            self.bump();
        }
        Ok(kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(source: &str) -> Vec<TokenKind> {
        tokenize(source)
            .unwrap()
            .into_iter()
            .map(|token| token.kind)
            .collect()
    }

    fn lex_error(source: &str) -> String {
        tokenize(source).unwrap_err().to_string()
    }

    #[test]
    fn words_keywords_and_quoted_identifiers() {
        let tokens = tokenize("match `a``b` Üml_1").unwrap();
        assert!(tokens[0].is_keyword("MATCH"));
        assert_eq!(tokens[1].kind, TokenKind::QuotedIdent("a`b".to_string()));
        assert!(!tokens[1].is_keyword("a`b"));
        assert_eq!(tokens[2].kind, TokenKind::Ident("Üml_1".to_string()));
        assert_eq!(tokens[3].kind, TokenKind::Eof);
    }

    #[test]
    fn integers_in_every_radix() {
        assert_eq!(
            kinds("42 0x1F 0o17 0X10 18446744073709551615"),
            vec![
                TokenKind::Integer(42),
                TokenKind::Integer(31),
                TokenKind::Integer(15),
                TokenKind::Integer(16),
                TokenKind::Integer(u64::MAX),
                TokenKind::Eof
            ]
        );
    }

    #[test]
    fn floats_and_ranges() {
        assert_eq!(
            kinds("1.5 .5 1e3 2.5E-2 1..3"),
            vec![
                TokenKind::Float(1.5),
                TokenKind::Float(0.5),
                TokenKind::Float(1000.0),
                TokenKind::Float(0.025),
                TokenKind::Integer(1),
                TokenKind::DotDot,
                TokenKind::Integer(3),
                TokenKind::Eof
            ]
        );
    }

    #[test]
    fn bad_numbers() {
        assert_eq!(
            lex_error("RETURN 0x"),
            "line 1, column 8: invalid number literal '0x'"
        );
        assert_eq!(
            lex_error("RETURN 12ab"),
            "line 1, column 8: invalid number literal '12ab'"
        );
        assert_eq!(
            lex_error("RETURN 1.34E999"),
            "line 1, column 8: floating point literal '1.34E999' is out of range"
        );
        assert_eq!(
            lex_error("RETURN 99999999999999999999"),
            "line 1, column 8: integer literal '99999999999999999999' does not fit in 64 bits"
        );
    }

    #[test]
    fn strings_and_escapes() {
        assert_eq!(
            kinds(r#"'a\'b' "c\"d" '\n\t\\' '\u00e9' '\uD83D\uDE00' '\U0001F600'"#),
            vec![
                TokenKind::String("a'b".to_string()),
                TokenKind::String("c\"d".to_string()),
                TokenKind::String("\n\t\\".to_string()),
                TokenKind::String("é".to_string()),
                TokenKind::String("😀".to_string()),
                TokenKind::String("😀".to_string()),
                TokenKind::Eof
            ]
        );
        assert_eq!(
            lex_error(r"RETURN '\uH'"),
            r"line 1, column 9: invalid unicode escape '\uH'"
        );
        assert_eq!(
            lex_error(r"RETURN '\q'"),
            r"line 1, column 9: invalid escape sequence '\q'"
        );
        assert_eq!(
            lex_error("RETURN 'abc"),
            "line 1, column 8: unterminated string literal"
        );
    }

    #[test]
    fn parameters() {
        assert_eq!(
            kinds("$name $0 $`odd name`"),
            vec![
                TokenKind::Parameter("name".to_string()),
                TokenKind::Parameter("0".to_string()),
                TokenKind::Parameter("odd name".to_string()),
                TokenKind::Eof
            ]
        );
    }

    #[test]
    fn operators_and_arrows() {
        use TokenKind::*;
        assert_eq!(
            kinds("<-[]->--<> <= >= =~ += .."),
            vec![
                Lt, Minus, LBracket, RBracket, Minus, Gt, Minus, Minus, NotEq, Le, Ge, RegexMatch,
                PlusEq, DotDot, Eof
            ]
        );
        assert_eq!(
            lex_error("RETURN 1 != 2"),
            "line 1, column 10: '!=' is not a Cypher operator, use '<>'"
        );
        assert_eq!(
            lex_error("RETURN 42 — 41"),
            "line 1, column 11: unexpected character '—'"
        );
    }

    #[test]
    fn comments_and_positions() {
        let tokens = tokenize("// line\nMATCH /* block\n */ (n)").unwrap();
        assert!(tokens[0].is_keyword("match"));
        assert_eq!((tokens[0].span.line, tokens[0].span.column), (2, 1));
        assert_eq!((tokens[1].span.line, tokens[1].span.column), (3, 5));
        assert_eq!(tokens[1].span.start, 27);
        assert_eq!(
            lex_error("RETURN /* x"),
            "line 1, column 8: unterminated block comment"
        );
    }
}
