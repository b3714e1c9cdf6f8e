"""Errors as they cross a ferry link: a code, a category and a text.

Contract: `Error` is what every call of this package raises for a failure
that ferry would report as a `caf::error` (docs/wire-format.md, "Errors"):
its `code` and `category` are the wire's numbers, `category_name` the
category's atom text and `name` the code's name where the category is one
ferry or CAF defines. An error a C++ actor answers arrives as an `Error`; an
`Error` a Python actor raises travels back to the requester as itself.
Pure: no I/O, no state.
"""

from __future__ import annotations

FERRY_FW = "ferry_fw"
FERRY_SER = "ferry_ser"
FERRY_STO = "ferry_sto"
EXIT = "exit"
SYSTEM = "system"

_NAMES: dict[str, list[str]] = {
    FERRY_FW: [
        "none", "connect_failed", "handshake_failed", "no_common_family",
        "family_refused", "unregistered_type", "message_too_large",
        "link_down", "no_such_actor", "transfer_failed", "invalid_config",
        "decode_failed", "send_timeout", "too_many_proxies",
        "too_many_actors", "receiver_full", "type_mismatch", "lane_failed",
        "already_linked", "cluster_refused", "unasked_response",
        "too_many_requests", "state_conflict", "state_store_failed",
        "unknown_entity_type", "invalid_entity_key", "entity_unavailable"],
    FERRY_SER: [
        "none", "no_family_can_encode", "family_not_allowed",
        "unknown_family", "family_exists", "unknown_type", "type_mismatch",
        "version_mismatch", "malformed_header", "truncated_frame",
        "malformed_frame", "length_out_of_range",
        "allocation_limit_exceeded", "payload_too_large", "encode_failed",
        "decode_failed", "trailing_bytes", "misaligned_frame",
        "nesting_too_deep", "frame_mismatch", "stand_in_mismatch",
        "family_unavailable", "actor_handle_without_link",
        "actor_handle_unsupported", "inexact_value", "invalid_text",
        "duplicate_key", "member_mismatch", "unused_frame",
        "type_name_taken", "invalid_type_name"],
    EXIT: [
        "normal", "unhandled_exception", "unknown", "out_of_workers",
        "user_shutdown", "kill", "remote_link_unreachable", "unreachable"],
    SYSTEM: [
        "none", "unexpected_message", "unexpected_response",
        "request_receiver_down", "request_timeout"] + [""] * 23
    + ["runtime_error"],
}


def atom(text: str) -> int:
    """Packs `text` (at most 10 characters) into a CAF atom value."""
    if len(text) > 10:
        raise ValueError(f"an atom holds at most 10 characters: {text!r}")
    value = 0xF
    for ch in text:
        if "0" <= ch <= "9":
            c = ord(ch) - ord("0") + 1
        elif "A" <= ch <= "Z":
            c = ord(ch) - ord("A") + 11
        elif ch == "_":
            c = 37
        elif "a" <= ch <= "z":
            c = ord(ch) - ord("a") + 38
        else:
            c = 0
        value = (value << 6) | c
    return value


_ATOM_CHARS = (" 0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_"
               "abcdefghijklmnopqrstuvwxyz")


def atom_text(value: int) -> str:
    """Unpacks a CAF atom value into its text (unknown characters as '?')."""
    chars: list[str] = []
    while value > 0xF:
        c = value & 0x3F
        chars.append(_ATOM_CHARS[c] if c else "?")
        value >>= 6
        if value <= 0xF:
            break
    return "".join(reversed(chars)) if value == 0xF else f"<{value:x}>"


class Error(Exception):
    """A ferry error: `code` (1-255) in the category `category_name`."""

    code: int
    category: int
    text: str

    def __init__(self, code: int, category: int | str,
                 text: str = "") -> None:
        if isinstance(category, str):
            category = atom(category)
        self.code = int(code)
        self.category = int(category)
        self.text = text
        super().__init__(self.render())

    @property
    def category_name(self) -> str:
        """The category's atom text (`ferry_fw`, `system`, ...)."""
        return atom_text(self.category)

    @property
    def name(self) -> str:
        """The code's name in its category, else the code as digits."""
        names = _NAMES.get(self.category_name, [])
        if 0 <= self.code < len(names) and names[self.code]:
            return names[self.code]
        return str(self.code)

    def render(self) -> str:
        """The error as ferry's `render` prints it: category: name: text."""
        head = f"{self.category_name}: {self.name}"
        return f"{head}: {self.text}" if self.text else head

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Error) and self.code == other.code
                and self.category == other.category
                and self.text == other.text)

    def __hash__(self) -> int:
        return hash((self.code, self.category, self.text))


def code_of(category: str, name: str) -> int:
    """The code of `name` in a category ferry or CAF defines."""
    return _NAMES[category].index(name)


def fw(name: str, text: str) -> Error:
    """An error of ferry's framework category, by its name."""
    return Error(code_of(FERRY_FW, name), FERRY_FW, text)


def ser(name: str, text: str) -> Error:
    """An error of ferry's serializers category, by its name."""
    return Error(code_of(FERRY_SER, name), FERRY_SER, text)


def system(name: str, text: str) -> Error:
    """An error of CAF's `caf::sec` category (`system`), by its name."""
    return Error(code_of(SYSTEM, name), SYSTEM, text)
