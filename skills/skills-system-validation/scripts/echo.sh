#!/bin/sh
# For hosts that can run skill scripts: prints its arguments and a marker. Skillhost never runs it.
echo "SCRIPT-MARKER: SCRIPT-91e0c5d2-skills-echo $*"
