package openstack

// EncryptPassword is what PostPassword sends for password and
// authorizedKey: base64 of password's RSA PKCS#1 v1.5 encryption with the
// key, as cloudbase-init's SetUserPasswordPlugin._encrypt_password.
func EncryptPassword(authorizedKey, password string) (string, error) {
	pub, err := parseSSHRSAKey(authorizedKey)
	if err != nil {
		return "", err
	}
	if err := checkPasswordFits(pub, password); err != nil {
		return "", err
	}
	return encryptPassword(pub, password)
}
