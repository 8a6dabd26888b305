"""Résumé parsing.

    agentflow extract --schema examples/resume.py:Resume \\
        --input examples/data/resumes.jsonl --model deepseek:deepseek-chat
"""

from __future__ import annotations

from pydantic import BaseModel, Field

INSTRUCTIONS = "Extract the candidate's résumé into structured fields."


class Job(BaseModel):
    title: str
    company: str
    start: str = Field(description="YYYY or YYYY-MM")
    end: str | None = Field(None, description="YYYY or YYYY-MM; null if current")


class Education(BaseModel):
    degree: str
    institution: str
    year: int | None = None


class Resume(BaseModel):
    """A candidate's résumé."""

    name: str
    email: str | None = None
    skills: list[str]
    experience: list[Job]
    education: list[Education] = []
