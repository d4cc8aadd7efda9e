// Package scripts holds the config modules that run or write what the
// user gave: bootcmd, runcmd, write_files, the user-data and vendor-data
// scripts (scripts_user, scripts_per_*), final_message, phone_home and
// power_state.
package scripts
