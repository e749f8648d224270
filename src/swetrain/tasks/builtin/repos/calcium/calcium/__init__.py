"""calcium: a tiny expression language with a tokenizer, a parser and an evaluator."""
from .lexer import LexError, Token, tokenize
from .parser import ParseError, parse
from .evaluator import EvalError, Interpreter, evaluate

__all__ = ["LexError", "Token", "tokenize", "ParseError", "parse", "EvalError", "Interpreter", "evaluate"]
