package ec2test

// A trimmed real AWS meta-data tree, for the EC2 reader's tests and the
// platform boots: two NICs, the second with secondary addresses and IPv6,
// and one key.
const (
	AWSMAC0 = "0a:49:e5:e5:4a:01"
	AWSMAC1 = "0a:49:e5:e5:4a:02"
	AWSKey  = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEarlyinitTestKey alice"
)

// AWSTree is the tree, as Service.Tree: instance i-0123456789abcdef0 in
// eu-west-1b, with credentials that must never be fetched.
func AWSTree() map[string]string {
	return map[string]string{
		"ami-id":                         "ami-0abcdef1234567890",
		"ami-launch-index":               "0",
		"hostname":                       "ip-172-31-20-5.eu-west-1.compute.internal",
		"instance-id":                    "i-0123456789abcdef0",
		"instance-type":                  "t3.micro",
		"local-hostname":                 "ip-172-31-20-5.eu-west-1.compute.internal",
		"local-ipv4":                     "172.31.20.5",
		"placement/availability-zone":    "eu-west-1b",
		"placement/availability-zone-id": "euw1-az1",
		"public-keys/":                   "0=my-key",
		"public-keys/0/openssh-key":      AWSKey + "\n",
		"iam/security-credentials/role":  `{"SecretAccessKey": "never fetch me"}`,
		"identity-credentials/ec2/info":  `{"Code": "Success", "AccountId": "123456789012"}`,
		"block-device-mapping/ami":       "/dev/xvda",
		"block-device-mapping/root":      "/dev/xvda",
		"network/interfaces/macs/" + AWSMAC0 + "/device-number":           "0",
		"network/interfaces/macs/" + AWSMAC0 + "/local-ipv4s":             "172.31.20.5",
		"network/interfaces/macs/" + AWSMAC0 + "/subnet-ipv4-cidr-block":  "172.31.16.0/20",
		"network/interfaces/macs/" + AWSMAC0 + "/vpc-id":                  "vpc-1",
		"network/interfaces/macs/" + AWSMAC1 + "/device-number":           "1",
		"network/interfaces/macs/" + AWSMAC1 + "/local-ipv4s":             "172.31.30.7\n172.31.30.9\n172.31.30.8",
		"network/interfaces/macs/" + AWSMAC1 + "/subnet-ipv4-cidr-block":  "172.31.16.0/20",
		"network/interfaces/macs/" + AWSMAC1 + "/ipv6s":                   "2a05:d018::7\n2a05:d018::8",
		"network/interfaces/macs/" + AWSMAC1 + "/subnet-ipv6-cidr-blocks": "2a05:d018::/64",
	}
}
