"""Long-term memory: the structured user profile, and consolidation (its own subpackage).

The profile is read out of the user's long-term preferences and injected by compose as rules;
consolidation is the scheduled job that turns stable episodes into long-term memory and keeps
it clean.
"""

from __future__ import annotations

from memory.longterm.profile import (
    ProfileField,
    UserProfile,
    derive_profile,
    extract,
    invalidate_profile,
    load_profile,
    profile_rules,
    refresh_profile,
)

__all__ = [
    "ProfileField",
    "UserProfile",
    "derive_profile",
    "extract",
    "invalidate_profile",
    "load_profile",
    "profile_rules",
    "refresh_profile",
]
