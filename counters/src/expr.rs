//! The expression language of derived counters, as rocprofiler-sdk's
//! definitions write it: numbers, counter names, `+ - * /` with the usual
//! precedence and parentheses, and three functions:
//!
//! - `reduce(X, sum|avr|min|max)` over every dimension of `X`, or
//!   `reduce(X, op, [DIM_A, DIM_B])` over the ones named;
//! - `accumulate(X, NONE|LOW_RES|HIGH_RES)`: `X` summed over the cycles of
//!   the dispatch (the resolution says how the hardware samples it);
//! - `select(X, [DIM=index, …])`: one index of the named dimensions.
//!
//! [`parse`] gives an [`Expr`] or an [`ExprError`] with the byte offset of
//! what it could not read.

use std::fmt;

/// A parsed expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A number.
    Number(f64),
    /// Another counter, by name.
    Counter(String),
    /// `a op b`.
    Binary(Box<Expr>, Op, Box<Expr>),
    /// `-a`.
    Negate(Box<Expr>),
    /// `reduce(x, how[, [dims]])`; no dims: every dimension.
    Reduce(Box<Expr>, Reduction, Vec<String>),
    /// `accumulate(x, resolution)`.
    Accumulate(Box<Expr>, String),
    /// `select(x, [dim=index, …])`; a dimension may name several indices
    /// (`[DIMENSION_XCC=0,2]`).
    Select(Box<Expr>, Vec<(String, Vec<u64>)>),
}

/// An arithmetic operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
}

/// How `reduce` folds instances.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reduction {
    /// `sum`
    Sum,
    /// `avr`: the mean.
    Avr,
    /// `min`
    Min,
    /// `max`
    Max,
}

/// An expression that does not parse: what and where (a byte offset into
/// the expression).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("at position {position}: {message}")]
pub struct ExprError {
    /// Byte offset of the token that could not be read (0-based).
    pub position: usize,
    /// What was expected or found.
    pub message: String,
}

impl Expr {
    /// Every counter name the expression reads, each once, in order of
    /// appearance.
    pub fn counters(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.walk(&mut |e| {
            if let Expr::Counter(name) = e {
                if !out.contains(&name.as_str()) {
                    out.push(name.as_str());
                }
            }
        });
        out
    }

    fn walk<'a>(&'a self, f: &mut impl FnMut(&'a Expr)) {
        f(self);
        match self {
            Expr::Number(_) | Expr::Counter(_) => {}
            Expr::Binary(a, _, b) => {
                a.walk(f);
                b.walk(f);
            }
            Expr::Negate(a)
            | Expr::Reduce(a, _, _)
            | Expr::Accumulate(a, _)
            | Expr::Select(a, _) => a.walk(f),
        }
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Number(n) => write!(f, "{n}"),
            Expr::Counter(c) => f.write_str(c),
            Expr::Binary(a, op, b) => {
                let op = match op {
                    Op::Add => '+',
                    Op::Sub => '-',
                    Op::Mul => '*',
                    Op::Div => '/',
                };
                write!(f, "({a}{op}{b})")
            }
            Expr::Negate(a) => write!(f, "-{a}"),
            Expr::Reduce(a, how, dims) => {
                let how = match how {
                    Reduction::Sum => "sum",
                    Reduction::Avr => "avr",
                    Reduction::Min => "min",
                    Reduction::Max => "max",
                };
                if dims.is_empty() {
                    write!(f, "reduce({a},{how})")
                } else {
                    write!(f, "reduce({a},{how},[{}])", dims.join(","))
                }
            }
            Expr::Accumulate(a, res) => write!(f, "accumulate({a},{res})"),
            Expr::Select(a, picks) => {
                let picks: Vec<String> = picks
                    .iter()
                    .map(|(d, i)| {
                        let i: Vec<String> = i.iter().map(u64::to_string).collect();
                        format!("{d}={}", i.join(","))
                    })
                    .collect();
                write!(f, "select({a},[{}])", picks.join(","))
            }
        }
    }
}

/// The dimension names `reduce` and `select` accept.
pub const DIMENSIONS: &[&str] = &[
    "DIMENSION_NONE",
    "DIMENSION_XCC",
    "DIMENSION_AID",
    "DIMENSION_SHADER_ENGINE",
    "DIMENSION_AGENT",
    "DIMENSION_SHADER_ARRAY",
    "DIMENSION_WGP",
    "DIMENSION_INSTANCE",
];

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Number(f64),
    Ident(String),
    Punct(char),
    End,
}

struct Lexer<'a> {
    text: &'a str,
    tokens: Vec<(usize, Token)>,
}

impl<'a> Lexer<'a> {
    fn run(text: &'a str) -> Result<Vec<(usize, Token)>, ExprError> {
        let mut lexer = Lexer {
            text,
            tokens: Vec::new(),
        };
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let c = bytes[i] as char;
            if c.is_ascii_whitespace() {
                i += 1;
            } else if c.is_ascii_digit()
                || (c == '.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit))
            {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
                    i += 1;
                }
                // An exponent: 1e6, 2.5E-3.
                if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
                    let mut j = i + 1;
                    if j < bytes.len() && (bytes[j] == b'+' || bytes[j] == b'-') {
                        j += 1;
                    }
                    if j < bytes.len() && bytes[j].is_ascii_digit() {
                        i = j;
                        while i < bytes.len() && bytes[i].is_ascii_digit() {
                            i += 1;
                        }
                    }
                }
                let number = &lexer.text[start..i];
                let value = number.parse::<f64>().map_err(|_| ExprError {
                    position: start,
                    message: format!("{number:?} is not a number"),
                })?;
                lexer.tokens.push((start, Token::Number(value)));
            } else if c.is_ascii_alphabetic() || c == '_' {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                lexer
                    .tokens
                    .push((start, Token::Ident(lexer.text[start..i].to_string())));
            } else if "+-*/(),[]=".contains(c) {
                lexer.tokens.push((i, Token::Punct(c)));
                i += 1;
            } else {
                let ch = lexer.text[i..].chars().next().unwrap_or('?');
                return Err(ExprError {
                    position: i,
                    message: format!("unexpected character {ch:?}"),
                });
            }
        }
        lexer.tokens.push((text.len(), Token::End));
        Ok(lexer.tokens)
    }
}

struct Parser {
    tokens: Vec<(usize, Token)>,
    at: usize,
}

/// Parses one expression.
pub fn parse(text: &str) -> Result<Expr, ExprError> {
    let mut p = Parser {
        tokens: Lexer::run(text)?,
        at: 0,
    };
    if p.peek() == &Token::End {
        return Err(p.error("the expression is empty"));
    }
    let e = p.sum()?;
    match p.peek() {
        Token::End => Ok(e),
        _ => Err(p.error(&format!(
            "unexpected {} after a complete expression",
            p.describe()
        ))),
    }
}

impl Parser {
    fn peek(&self) -> &Token {
        &self.tokens[self.at].1
    }

    fn position(&self) -> usize {
        self.tokens[self.at].0
    }

    fn describe(&self) -> String {
        match self.peek() {
            Token::Number(n) => format!("number {n}"),
            Token::Ident(s) => format!("name {s:?}"),
            Token::Punct(c) => format!("{c:?}"),
            Token::End => "end of expression".into(),
        }
    }

    fn error(&self, message: &str) -> ExprError {
        ExprError {
            position: self.position(),
            message: message.into(),
        }
    }

    fn next(&mut self) -> Token {
        let t = self.tokens[self.at].1.clone();
        if t != Token::End {
            self.at += 1;
        }
        t
    }

    fn expect(&mut self, c: char) -> Result<(), ExprError> {
        if self.peek() == &Token::Punct(c) {
            self.next();
            Ok(())
        } else {
            Err(self.error(&format!("expected {c:?}, found {}", self.describe())))
        }
    }

    fn sum(&mut self) -> Result<Expr, ExprError> {
        self.left_assoc(&[('+', Op::Add), ('-', Op::Sub)], Self::product)
    }

    fn product(&mut self) -> Result<Expr, ExprError> {
        self.left_assoc(&[('*', Op::Mul), ('/', Op::Div)], Self::unary)
    }

    /// `operand (op operand)*` for the operators of one precedence level,
    /// folded to the left.
    fn left_assoc(
        &mut self,
        ops: &[(char, Op)],
        operand: fn(&mut Self) -> Result<Expr, ExprError>,
    ) -> Result<Expr, ExprError> {
        let mut e = operand(self)?;
        loop {
            let Some(&(_, op)) = ops.iter().find(|(c, _)| self.peek() == &Token::Punct(*c)) else {
                return Ok(e);
            };
            self.next();
            e = Expr::Binary(Box::new(e), op, Box::new(operand(self)?));
        }
    }

    fn unary(&mut self) -> Result<Expr, ExprError> {
        if self.peek() == &Token::Punct('-') {
            self.next();
            return Ok(Expr::Negate(Box::new(self.unary()?)));
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Expr, ExprError> {
        match self.peek().clone() {
            Token::Number(n) => {
                self.next();
                Ok(Expr::Number(n))
            }
            Token::Punct('(') => {
                self.next();
                let e = self.sum()?;
                self.expect(')')?;
                Ok(e)
            }
            Token::Ident(name) => {
                self.next();
                if self.peek() != &Token::Punct('(') {
                    return Ok(Expr::Counter(name));
                }
                match name.as_str() {
                    "reduce" => self.reduce(),
                    "accumulate" => self.accumulate(),
                    "select" => self.select(),
                    _ => {
                        self.at -= 1;
                        Err(self.error(&format!(
                            "unknown function {name:?} (the functions are reduce, accumulate and select)"
                        )))
                    }
                }
            }
            _ => Err(self.error(&format!(
                "expected a number, a counter or '(', found {}",
                self.describe()
            ))),
        }
    }

    fn ident(&mut self, what: &str) -> Result<String, ExprError> {
        match self.peek().clone() {
            Token::Ident(s) => {
                self.next();
                Ok(s)
            }
            _ => Err(self.error(&format!("expected {what}, found {}", self.describe()))),
        }
    }

    fn dimension(&mut self) -> Result<String, ExprError> {
        let at = self.position();
        let name = self.ident("a dimension")?;
        if !DIMENSIONS.contains(&name.as_str()) {
            return Err(ExprError {
                position: at,
                message: format!(
                    "unknown dimension {name:?} (one of {})",
                    DIMENSIONS.join(", ")
                ),
            });
        }
        Ok(name)
    }

    fn reduce(&mut self) -> Result<Expr, ExprError> {
        self.expect('(')?;
        let x = self.sum()?;
        self.expect(',')?;
        let at = self.position();
        let how = match self.ident("sum, avr, min or max")?.as_str() {
            "sum" => Reduction::Sum,
            "avr" => Reduction::Avr,
            "min" => Reduction::Min,
            "max" => Reduction::Max,
            other => {
                return Err(ExprError {
                    position: at,
                    message: format!("{other:?} is not a reduction (sum, avr, min or max)"),
                })
            }
        };
        let mut dims = Vec::new();
        if self.peek() == &Token::Punct(',') {
            self.next();
            self.expect('[')?;
            loop {
                dims.push(self.dimension()?);
                if self.peek() == &Token::Punct(',') {
                    self.next();
                    continue;
                }
                self.expect(']')?;
                break;
            }
        }
        self.expect(')')?;
        Ok(Expr::Reduce(Box::new(x), how, dims))
    }

    fn index(&mut self) -> Result<u64, ExprError> {
        let at = self.position();
        match self.next() {
            Token::Number(n) if n >= 0.0 && n.fract() == 0.0 && n < 64.0 => Ok(n as u64),
            _ => Err(ExprError {
                position: at,
                message: "expected an index: a whole number below 64".into(),
            }),
        }
    }

    fn accumulate(&mut self) -> Result<Expr, ExprError> {
        self.expect('(')?;
        let x = self.sum()?;
        self.expect(',')?;
        let at = self.position();
        let res = self.ident("NONE, LOW_RES or HIGH_RES")?;
        if !matches!(res.as_str(), "NONE" | "LOW_RES" | "HIGH_RES") {
            return Err(ExprError {
                position: at,
                message: format!("{res:?} is not a resolution (NONE, LOW_RES or HIGH_RES)"),
            });
        }
        self.expect(')')?;
        Ok(Expr::Accumulate(Box::new(x), res))
    }

    fn select(&mut self) -> Result<Expr, ExprError> {
        self.expect('(')?;
        let x = self.sum()?;
        self.expect(',')?;
        self.expect('[')?;
        let mut picks = Vec::new();
        loop {
            let dim = self.dimension()?;
            self.expect('=')?;
            let mut indices = vec![self.index()?];
            // `DIM=0,2`: more indices of the same dimension, up to the next
            // `DIM=` or the `]`.
            while self.peek() == &Token::Punct(',')
                && matches!(self.tokens[self.at + 1].1, Token::Number(_))
            {
                self.next();
                indices.push(self.index()?);
            }
            picks.push((dim, indices));
            if self.peek() == &Token::Punct(',') {
                self.next();
                continue;
            }
            self.expect(']')?;
            break;
        }
        self.expect(')')?;
        Ok(Expr::Select(Box::new(x), picks))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence_and_functions() {
        let e = parse("100*reduce(GRBM_GUI_ACTIVE,max)/reduce(GRBM_COUNT,max)").unwrap();
        assert_eq!(
            e.to_string(),
            "((100*reduce(GRBM_GUI_ACTIVE,max))/reduce(GRBM_COUNT,max))"
        );
        assert_eq!(e.counters(), ["GRBM_GUI_ACTIVE", "GRBM_COUNT"]);
        let e = parse("a - b - c * -2").unwrap();
        assert_eq!(e.to_string(), "((a-b)-(c*-2))");
        let e = parse("reduce(TCC_HIT, sum, [DIMENSION_XCC, DIMENSION_INSTANCE])").unwrap();
        assert_eq!(
            e.to_string(),
            "reduce(TCC_HIT,sum,[DIMENSION_XCC,DIMENSION_INSTANCE])"
        );
        let e = parse("select(SQ_WAVES,[DIMENSION_XCC=0, DIMENSION_SHADER_ENGINE=3])").unwrap();
        assert_eq!(
            e.to_string(),
            "select(SQ_WAVES,[DIMENSION_XCC=0,DIMENSION_SHADER_ENGINE=3])"
        );
        let e = parse("accumulate(SQ_LEVEL_WAVES, HIGH_RES) / 1e3 + .5").unwrap();
        assert_eq!(
            e.to_string(),
            "((accumulate(SQ_LEVEL_WAVES,HIGH_RES)/1000)+0.5)"
        );
    }

    #[test]
    fn errors_say_where() {
        let e = parse("a + * b").unwrap_err();
        assert_eq!(e.position, 4);
        assert!(e.message.contains("'*'"), "{e}");
        let e = parse("reduce(a, mean)").unwrap_err();
        assert_eq!(e.position, 10);
        assert!(e.message.contains("\"mean\""), "{e}");
        let e = parse("(a + b").unwrap_err();
        assert_eq!(e.position, 6);
        let e = parse("a $ b").unwrap_err();
        assert_eq!(e.position, 2);
        let e = parse("sqrt(a)").unwrap_err();
        assert_eq!(e.position, 0);
        assert!(parse("").is_err());
        assert!(parse("a b").is_err());
        let e = parse("select(a,[DIMENSION_XCC=1.5])").unwrap_err();
        assert_eq!(e.position, 24);
        let e = parse("reduce(a,sum,[DIMENSION_BANK])").unwrap_err();
        assert_eq!(e.position, 14);
        assert!(e.message.contains("unknown dimension"), "{e}");
        let e = parse("select(a,[DIMENSION_XCC=0,2, DIMENSION_INSTANCE=1])").unwrap();
        assert_eq!(
            e.to_string(),
            "select(a,[DIMENSION_XCC=0,2,DIMENSION_INSTANCE=1])"
        );
    }
}
