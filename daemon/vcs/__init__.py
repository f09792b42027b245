"""Version control of runs: every editing run on branch ``ided/run/<id>`` in its own git worktree.

One commit per stage attempt that changed files; the run's change set reviewed as one diff; accept
applies its commits to the user's branch only when no file overlaps the user's own changes
(committed or not); reject leaves everything as it is; rollback reverts with new commits; cleanup
removes old worktrees and branches. See docs/review.md.

Import from the modules: ``daemon.core.review_models`` (the light models fronts and stores use) and
``daemon.vcs.worktrees`` (``RunWorktrees``, which loads git).
"""
