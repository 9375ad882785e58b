#!/bin/sh
# For hosts that can run skill scripts (Skillhost: skills.runScript, sandboxed): prints its arguments and a marker.
echo "SCRIPT-MARKER: SCRIPT-91e0c5d2-skills-echo $*"
