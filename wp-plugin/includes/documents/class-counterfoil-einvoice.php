<?php
/**
 * E-invoices on the pure-PHP backend: the twin of the core's EN 16931
 * document and its UBL (Peppol BIS 3.0 when both parties are Peppol
 * participants, else plain EN 16931) and CII serializers
 * (core/src/einvoice/), held to the same bytes by the shared vectors
 * (tests/vectors/einvoice.json and einvoice/, wp-plugin/tests/VectorsTest.php).
 *
 * Invariants: every amount by EN 16931's calculation rules in exact decimals
 * ([mantissa, scale] pairs of PHP integers, 64-bit like the core's, every
 * operation checked: what does not fit is refused, never a float), a line's
 * net amount and a category's VAT rounded once to the currency's places (or
 * that VAT the sum its lines state, within their rounding); the input is read
 * as the core's json.rs reads it (a field of the wrong type is absent), then
 * checked in the core's order, so a document is refused naming the business
 * term the core names when it lacks what a valid one requires; the payment
 * means, delivery, notes, orders, accounting-currency VAT and document-level
 * allowances and charges (each in the VAT breakdown of its category and
 * rate) are written where the core writes them; the code lists are the
 * core's (codes.rs); the same input gives the same bytes as the core's.
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

// phpcs:disable WordPress.Security.EscapeOutput.ExceptionNotEscaped -- an exception's message is text, not HTML: it goes to the log, a REST answer (JSON) or a WP_Error, and every page that prints one escapes it there.

/**
 * The document model and its two XML syntaxes.
 */
final class Counterfoil_Einvoice {
	const CUSTOMIZATION_ID = 'urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0';
	const PROFILE_ID       = 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0';
	const GUIDELINE_ID     = 'urn:cen.eu:en16931:2017';
	/**
	 * The electronic address schemes Peppol accepts (its EAS list as
	 * PEPPOL-EN16931-CL008 checks it in BIS Billing 3.0.19): the core's
	 * `peppol::PEPPOL_EAS`, held to it by the shared vectors.
	 */
	const PEPPOL_EAS = array( '0002', '0007', '0009', '0037', '0060', '0088', '0096', '0097', '0106', '0130', '0135', '0142', '0147', '0151', '0154', '0158', '0170', '0177', '0183', '0184', '0188', '0190', '0191', '0192', '0193', '0194', '0195', '0196', '0198', '0199', '0200', '0201', '0202', '0203', '0204', '0205', '0208', '0209', '0210', '0211', '0212', '0213', '0215', '0216', '0217', '0218', '0221', '0225', '0230', '0235', '0240', '9910', '9913', '9914', '9915', '9918', '9919', '9920', '9922', '9923', '9924', '9925', '9926', '9927', '9928', '9929', '9930', '9931', '9932', '9933', '9934', '9935', '9936', '9937', '9938', '9939', '9940', '9941', '9942', '9943', '9944', '9945', '9946', '9947', '9948', '9949', '9950', '9951', '9952', '9953', '9957', '9959' );
	const CATEGORIES       = array( 'S', 'Z', 'E', 'AE', 'K', 'G', 'O' );
	/** ISO 4217 currency codes as BR-CL-04 lists them (the core's codes::CURRENCIES). */
	const CURRENCIES = array( 'AED', 'AFN', 'ALL', 'AMD', 'ANG', 'AOA', 'ARS', 'AUD', 'AWG', 'AZN', 'BAM', 'BBD', 'BDT', 'BGN', 'BHD', 'BIF', 'BMD', 'BND', 'BOB', 'BOV', 'BRL', 'BSD', 'BTN', 'BWP', 'BYN', 'BZD', 'CAD', 'CDF', 'CHE', 'CHF', 'CHW', 'CLF', 'CLP', 'CNY', 'COP', 'COU', 'CRC', 'CUC', 'CUP', 'CVE', 'CZK', 'DJF', 'DKK', 'DOP', 'DZD', 'EGP', 'ERN', 'ETB', 'EUR', 'FJD', 'FKP', 'GBP', 'GEL', 'GHS', 'GIP', 'GMD', 'GNF', 'GTQ', 'GYD', 'HKD', 'HNL', 'HTG', 'HUF', 'IDR', 'ILS', 'INR', 'IQD', 'IRR', 'ISK', 'JMD', 'JOD', 'JPY', 'KES', 'KGS', 'KHR', 'KMF', 'KPW', 'KRW', 'KWD', 'KYD', 'KZT', 'LAK', 'LBP', 'LKR', 'LRD', 'LSL', 'LYD', 'MAD', 'MDL', 'MGA', 'MKD', 'MMK', 'MNT', 'MOP', 'MRO', 'MUR', 'MVR', 'MWK', 'MXN', 'MXV', 'MYR', 'MZN', 'NAD', 'NGN', 'NIO', 'NOK', 'NPR', 'NZD', 'OMR', 'PAB', 'PEN', 'PGK', 'PHP', 'PKR', 'PLN', 'PYG', 'QAR', 'RON', 'RSD', 'RUB', 'RWF', 'SAR', 'SBD', 'SCR', 'SDG', 'SEK', 'SGD', 'SHP', 'SLE', 'SOS', 'SRD', 'SSP', 'STD', 'SVC', 'SYP', 'SZL', 'THB', 'TJS', 'TMT', 'TND', 'TOP', 'TRY', 'TTD', 'TWD', 'TZS', 'UAH', 'UGX', 'USD', 'USN', 'UYI', 'UYU', 'UZS', 'VED', 'VES', 'VND', 'VUV', 'WST', 'XAF', 'XAG', 'XAU', 'XBA', 'XBB', 'XBC', 'XBD', 'XCD', 'XDR', 'XOF', 'XPD', 'XPF', 'XPT', 'XSU', 'XTS', 'XUA', 'XXX', 'YER', 'ZAR', 'ZMW', 'ZWG' );
	/** ISO 3166-1 alpha-2 (with 1A, XI) as BR-CL-14 lists them (the core's codes::COUNTRIES). */
	const COUNTRIES = array( '1A', 'AD', 'AE', 'AF', 'AG', 'AI', 'AL', 'AM', 'AO', 'AQ', 'AR', 'AS', 'AT', 'AU', 'AW', 'AX', 'AZ', 'BA', 'BB', 'BD', 'BE', 'BF', 'BG', 'BH', 'BI', 'BJ', 'BL', 'BM', 'BN', 'BO', 'BQ', 'BR', 'BS', 'BT', 'BV', 'BW', 'BY', 'BZ', 'CA', 'CC', 'CD', 'CF', 'CG', 'CH', 'CI', 'CK', 'CL', 'CM', 'CN', 'CO', 'CR', 'CU', 'CV', 'CW', 'CX', 'CY', 'CZ', 'DE', 'DJ', 'DK', 'DM', 'DO', 'DZ', 'EC', 'EE', 'EG', 'EH', 'ER', 'ES', 'ET', 'FI', 'FJ', 'FK', 'FM', 'FO', 'FR', 'GA', 'GB', 'GD', 'GE', 'GF', 'GG', 'GH', 'GI', 'GL', 'GM', 'GN', 'GP', 'GQ', 'GR', 'GS', 'GT', 'GU', 'GW', 'GY', 'HK', 'HM', 'HN', 'HR', 'HT', 'HU', 'ID', 'IE', 'IL', 'IM', 'IN', 'IO', 'IQ', 'IR', 'IS', 'IT', 'JE', 'JM', 'JO', 'JP', 'KE', 'KG', 'KH', 'KI', 'KM', 'KN', 'KP', 'KR', 'KW', 'KY', 'KZ', 'LA', 'LB', 'LC', 'LI', 'LK', 'LR', 'LS', 'LT', 'LU', 'LV', 'LY', 'MA', 'MC', 'MD', 'ME', 'MF', 'MG', 'MH', 'MK', 'ML', 'MM', 'MN', 'MO', 'MP', 'MQ', 'MR', 'MS', 'MT', 'MU', 'MV', 'MW', 'MX', 'MY', 'MZ', 'NA', 'NC', 'NE', 'NF', 'NG', 'NI', 'NL', 'NO', 'NP', 'NR', 'NU', 'NZ', 'OM', 'PA', 'PE', 'PF', 'PG', 'PH', 'PK', 'PL', 'PM', 'PN', 'PR', 'PS', 'PT', 'PW', 'PY', 'QA', 'RE', 'RO', 'RS', 'RU', 'RW', 'SA', 'SB', 'SC', 'SD', 'SE', 'SG', 'SH', 'SI', 'SJ', 'SK', 'SL', 'SM', 'SN', 'SO', 'SR', 'SS', 'ST', 'SV', 'SX', 'SY', 'SZ', 'TC', 'TD', 'TF', 'TG', 'TH', 'TJ', 'TK', 'TL', 'TM', 'TN', 'TO', 'TR', 'TT', 'TV', 'TW', 'TZ', 'UA', 'UG', 'UM', 'US', 'UY', 'UZ', 'VA', 'VC', 'VE', 'VG', 'VI', 'VN', 'VU', 'WF', 'WS', 'XI', 'YE', 'YT', 'ZA', 'ZM', 'ZW' );
	const EXEMPTION        = array(
		'E'  => 'Exempt from VAT',
		'AE' => 'Reverse charge',
		'K'  => 'Intra-community supply',
		'G'  => 'Export outside the EU',
		'O'  => 'Not subject to VAT',
	);
	/** Identifier schemes (ISO 6523 ICD), as BR-CL-10/BR-CL-11 list them (the core's codes::ICD). */
	const ICD = array( '0002', '0003', '0004', '0005', '0006', '0007', '0008', '0009', '0010', '0011', '0012', '0013', '0014', '0015', '0016', '0017', '0018', '0019', '0020', '0021', '0022', '0023', '0024', '0025', '0026', '0027', '0028', '0029', '0030', '0031', '0032', '0033', '0034', '0035', '0036', '0037', '0038', '0039', '0040', '0041', '0042', '0043', '0044', '0045', '0046', '0047', '0048', '0049', '0050', '0051', '0052', '0053', '0054', '0055', '0056', '0057', '0058', '0059', '0060', '0061', '0062', '0063', '0064', '0065', '0066', '0067', '0068', '0069', '0070', '0071', '0072', '0073', '0074', '0075', '0076', '0077', '0078', '0079', '0080', '0081', '0082', '0083', '0084', '0085', '0086', '0087', '0088', '0089', '0090', '0091', '0093', '0094', '0095', '0096', '0097', '0098', '0099', '0100', '0101', '0102', '0104', '0105', '0106', '0107', '0108', '0109', '0110', '0111', '0112', '0113', '0114', '0115', '0116', '0117', '0118', '0119', '0120', '0121', '0122', '0123', '0124', '0125', '0126', '0127', '0128', '0129', '0130', '0131', '0132', '0133', '0134', '0135', '0136', '0137', '0138', '0139', '0140', '0141', '0142', '0143', '0144', '0145', '0146', '0147', '0148', '0149', '0150', '0151', '0152', '0153', '0154', '0155', '0156', '0157', '0158', '0159', '0160', '0161', '0162', '0163', '0164', '0165', '0166', '0167', '0168', '0169', '0170', '0171', '0172', '0173', '0174', '0175', '0176', '0177', '0178', '0179', '0180', '0183', '0184', '0185', '0186', '0187', '0188', '0189', '0190', '0191', '0192', '0193', '0194', '0195', '0196', '0197', '0198', '0199', '0200', '0201', '0202', '0203', '0204', '0205', '0206', '0207', '0208', '0209', '0210', '0211', '0212', '0213', '0214', '0215', '0216', '0217', '0218', '0219', '0220', '0221', '0222', '0223', '0224', '0225', '0226', '0227', '0228', '0229', '0230', '0231', '0232', '0233', '0234', '0235', '0236', '0237', '0238', '0239', '0240', '0241', '0242', '0243', '0244', '0245', '0246', '0247', '0248' );
	/** Payment means codes (UNCL4461), as BR-CL-16 lists them (the core's codes::PAYMENT_MEANS). */
	const PAYMENT_MEANS = array( '1', '10', '11', '12', '13', '14', '15', '16', '17', '18', '19', '2', '20', '21', '22', '23', '24', '25', '26', '27', '28', '29', '3', '30', '31', '32', '33', '34', '35', '36', '37', '38', '39', '4', '40', '41', '42', '43', '44', '45', '46', '47', '48', '49', '5', '50', '51', '52', '53', '54', '55', '56', '57', '58', '59', '6', '60', '61', '62', '63', '64', '65', '66', '67', '68', '69', '7', '70', '74', '75', '76', '77', '78', '8', '9', '91', '92', '93', '94', '95', '96', '97', '98', 'ZZZ' );
	/** VAT exemption reason codes (CEF VATEX), as BR-CL-22 lists them (the core's codes::VATEX). */
	const VATEX = array( 'VATEX-EU-132', 'VATEX-EU-132-1A', 'VATEX-EU-132-1B', 'VATEX-EU-132-1C', 'VATEX-EU-132-1D', 'VATEX-EU-132-1E', 'VATEX-EU-132-1F', 'VATEX-EU-132-1G', 'VATEX-EU-132-1H', 'VATEX-EU-132-1I', 'VATEX-EU-132-1J', 'VATEX-EU-132-1K', 'VATEX-EU-132-1L', 'VATEX-EU-132-1M', 'VATEX-EU-132-1N', 'VATEX-EU-132-1O', 'VATEX-EU-132-1P', 'VATEX-EU-132-1Q', 'VATEX-EU-135-1', 'VATEX-EU-143', 'VATEX-EU-143-1A', 'VATEX-EU-143-1B', 'VATEX-EU-143-1C', 'VATEX-EU-143-1D', 'VATEX-EU-143-1E', 'VATEX-EU-143-1F', 'VATEX-EU-143-1FA', 'VATEX-EU-143-1G', 'VATEX-EU-143-1H', 'VATEX-EU-143-1I', 'VATEX-EU-143-1J', 'VATEX-EU-143-1K', 'VATEX-EU-143-1L', 'VATEX-EU-144', 'VATEX-EU-146-1E', 'VATEX-EU-148', 'VATEX-EU-148-A', 'VATEX-EU-148-B', 'VATEX-EU-148-C', 'VATEX-EU-148-D', 'VATEX-EU-148-E', 'VATEX-EU-148-F', 'VATEX-EU-148-G', 'VATEX-EU-151', 'VATEX-EU-151-1A', 'VATEX-EU-151-1AA', 'VATEX-EU-151-1B', 'VATEX-EU-151-1C', 'VATEX-EU-151-1D', 'VATEX-EU-151-1E', 'VATEX-EU-153', 'VATEX-EU-159', 'VATEX-EU-309', 'VATEX-EU-79-C', 'VATEX-EU-AE', 'VATEX-EU-D', 'VATEX-EU-F', 'VATEX-EU-G', 'VATEX-EU-I', 'VATEX-EU-IC', 'VATEX-EU-J', 'VATEX-EU-O', 'VATEX-FR-298SEXDECIESA', 'VATEX-FR-AE', 'VATEX-FR-CGI261-1', 'VATEX-FR-CGI261-2', 'VATEX-FR-CGI261-3', 'VATEX-FR-CGI261-4', 'VATEX-FR-CGI261-5', 'VATEX-FR-CGI261-7', 'VATEX-FR-CGI261-8', 'VATEX-FR-CGI261A', 'VATEX-FR-CGI261B', 'VATEX-FR-CGI261C-1', 'VATEX-FR-CGI261C-2', 'VATEX-FR-CGI261C-3', 'VATEX-FR-CGI261D-1', 'VATEX-FR-CGI261D-1BIS', 'VATEX-FR-CGI261D-2', 'VATEX-FR-CGI261D-3', 'VATEX-FR-CGI261D-4', 'VATEX-FR-CGI261E-1', 'VATEX-FR-CGI261E-2', 'VATEX-FR-CGI275', 'VATEX-FR-CGI277A', 'VATEX-FR-CGI295', 'VATEX-FR-CNWVAT', 'VATEX-FR-FRANCHISE' );
	/** Units of measure (UN/ECE Recommendations 20 and 21), as BR-CL-23 lists them (the core's codes::UNIT_CODES). */
	const UNIT_CODES = array( '10', '11', '13', '14', '15', '1I', '20', '21', '22', '23', '24', '25', '27', '28', '2A', '2B', '2C', '2G', '2H', '2I', '2J', '2K', '2L', '2M', '2N', '2P', '2Q', '2R', '2U', '2X', '2Y', '2Z', '33', '34', '35', '37', '38', '3B', '3C', '40', '41', '4C', '4G', '4H', '4K', '4L', '4M', '4N', '4O', '4P', '4Q', '4R', '4T', '4U', '4W', '4X', '56', '57', '58', '59', '5A', '5B', '5E', '5J', '60', '61', '74', '77', '80', '81', '85', '87', '89', '91', 'A10', 'A11', 'A12', 'A13', 'A14', 'A15', 'A16', 'A17', 'A18', 'A19', 'A2', 'A20', 'A21', 'A22', 'A23', 'A24', 'A26', 'A27', 'A28', 'A29', 'A3', 'A30', 'A31', 'A32', 'A33', 'A34', 'A35', 'A36', 'A37', 'A38', 'A39', 'A4', 'A40', 'A41', 'A42', 'A43', 'A44', 'A45', 'A47', 'A48', 'A49', 'A5', 'A53', 'A54', 'A55', 'A56', 'A59', 'A6', 'A68', 'A69', 'A7', 'A70', 'A71', 'A73', 'A74', 'A75', 'A76', 'A8', 'A84', 'A85', 'A86', 'A87', 'A88', 'A89', 'A9', 'A90', 'A91', 'A93', 'A94', 'A95', 'A96', 'A97', 'A98', 'A99', 'AA', 'AB', 'ACR', 'ACT', 'AD', 'AE', 'AH', 'AI', 'AK', 'AL', 'AMH', 'AMP', 'ANN', 'APZ', 'AQ', 'AS', 'ASM', 'ASU', 'ATM', 'AWG', 'AY', 'AZ', 'B1', 'B10', 'B11', 'B12', 'B13', 'B14', 'B15', 'B16', 'B17', 'B18', 'B19', 'B20', 'B21', 'B22', 'B23', 'B24', 'B25', 'B26', 'B27', 'B28', 'B29', 'B3', 'B30', 'B31', 'B32', 'B33', 'B34', 'B35', 'B4', 'B41', 'B42', 'B43', 'B44', 'B45', 'B46', 'B47', 'B48', 'B49', 'B50', 'B52', 'B53', 'B54', 'B55', 'B56', 'B57', 'B58', 'B59', 'B60', 'B61', 'B62', 'B63', 'B64', 'B66', 'B67', 'B68', 'B69', 'B7', 'B70', 'B71', 'B72', 'B73', 'B74', 'B75', 'B76', 'B77', 'B78', 'B79', 'B8', 'B80', 'B81', 'B82', 'B83', 'B84', 'B85', 'B86', 'B87', 'B88', 'B89', 'B90', 'B91', 'B92', 'B93', 'B94', 'B95', 'B96', 'B97', 'B98', 'B99', 'BAR', 'BB', 'BFT', 'BHP', 'BIL', 'BLD', 'BLL', 'BP', 'BPM', 'BQL', 'BTU', 'BUA', 'BUI', 'C0', 'C10', 'C11', 'C12', 'C13', 'C14', 'C15', 'C16', 'C17', 'C18', 'C19', 'C20', 'C21', 'C22', 'C23', 'C24', 'C25', 'C26', 'C27', 'C28', 'C29', 'C3', 'C30', 'C31', 'C32', 'C33', 'C34', 'C35', 'C36', 'C37', 'C38', 'C39', 'C40', 'C41', 'C42', 'C43', 'C44', 'C45', 'C46', 'C47', 'C48', 'C49', 'C50', 'C51', 'C52', 'C53', 'C54', 'C55', 'C56', 'C57', 'C58', 'C59', 'C60', 'C61', 'C62', 'C63', 'C64', 'C65', 'C66', 'C67', 'C68', 'C69', 'C7', 'C70', 'C71', 'C72', 'C73', 'C74', 'C75', 'C76', 'C78', 'C79', 'C8', 'C80', 'C81', 'C82', 'C83', 'C84', 'C85', 'C86', 'C87', 'C88', 'C89', 'C9', 'C90', 'C91', 'C92', 'C93', 'C94', 'C95', 'C96', 'C97', 'C99', 'CCT', 'CDL', 'CEL', 'CEN', 'CG', 'CGM', 'CKG', 'CLF', 'CLT', 'CMK', 'CMQ', 'CMT', 'CNP', 'CNT', 'COU', 'CTG', 'CTM', 'CTN', 'CUR', 'CWA', 'CWI', 'D03', 'D04', 'D1', 'D10', 'D11', 'D12', 'D13', 'D15', 'D16', 'D17', 'D18', 'D19', 'D2', 'D20', 'D21', 'D22', 'D23', 'D24', 'D25', 'D26', 'D27', 'D29', 'D30', 'D31', 'D32', 'D33', 'D34', 'D36', 'D41', 'D42', 'D43', 'D44', 'D45', 'D46', 'D47', 'D48', 'D49', 'D5', 'D50', 'D51', 'D52', 'D53', 'D54', 'D55', 'D56', 'D57', 'D58', 'D59', 'D6', 'D60', 'D61', 'D62', 'D63', 'D65', 'D68', 'D69', 'D73', 'D74', 'D77', 'D78', 'D80', 'D81', 'D82', 'D83', 'D85', 'D86', 'D87', 'D88', 'D89', 'D91', 'D93', 'D94', 'D95', 'DAA', 'DAD', 'DAY', 'DB', 'DBM', 'DBW', 'DD', 'DEC', 'DG', 'DJ', 'DLT', 'DMA', 'DMK', 'DMO', 'DMQ', 'DMT', 'DN', 'DPC', 'DPR', 'DPT', 'DRA', 'DRI', 'DRL', 'DT', 'DTN', 'DWT', 'DZN', 'DZP', 'E01', 'E07', 'E08', 'E09', 'E10', 'E12', 'E14', 'E15', 'E16', 'E17', 'E18', 'E19', 'E20', 'E21', 'E22', 'E23', 'E25', 'E27', 'E28', 'E30', 'E31', 'E32', 'E33', 'E34', 'E35', 'E36', 'E37', 'E38', 'E39', 'E4', 'E40', 'E41', 'E42', 'E43', 'E44', 'E45', 'E46', 'E47', 'E48', 'E49', 'E50', 'E51', 'E52', 'E53', 'E54', 'E55', 'E56', 'E57', 'E58', 'E59', 'E60', 'E61', 'E62', 'E63', 'E64', 'E65', 'E66', 'E67', 'E68', 'E69', 'E70', 'E71', 'E72', 'E73', 'E74', 'E75', 'E76', 'E77', 'E78', 'E79', 'E80', 'E81', 'E82', 'E83', 'E84', 'E85', 'E86', 'E87', 'E88', 'E89', 'E90', 'E91', 'E92', 'E93', 'E94', 'E95', 'E96', 'E97', 'E98', 'E99', 'EA', 'EB', 'EQ', 'F01', 'F02', 'F03', 'F04', 'F05', 'F06', 'F07', 'F08', 'F10', 'F11', 'F12', 'F13', 'F14', 'F15', 'F16', 'F17', 'F18', 'F19', 'F20', 'F21', 'F22', 'F23', 'F24', 'F25', 'F26', 'F27', 'F28', 'F29', 'F30', 'F31', 'F32', 'F33', 'F34', 'F35', 'F36', 'F37', 'F38', 'F39', 'F40', 'F41', 'F42', 'F43', 'F44', 'F45', 'F46', 'F47', 'F48', 'F49', 'F50', 'F51', 'F52', 'F53', 'F54', 'F55', 'F56', 'F57', 'F58', 'F59', 'F60', 'F61', 'F62', 'F63', 'F64', 'F65', 'F66', 'F67', 'F68', 'F69', 'F70', 'F71', 'F72', 'F73', 'F74', 'F75', 'F76', 'F77', 'F78', 'F79', 'F80', 'F81', 'F82', 'F83', 'F84', 'F85', 'F86', 'F87', 'F88', 'F89', 'F90', 'F91', 'F92', 'F93', 'F94', 'F95', 'F96', 'F97', 'F98', 'F99', 'FAH', 'FAR', 'FBM', 'FC', 'FF', 'FH', 'FIT', 'FL', 'FNU', 'FOT', 'FP', 'FR', 'FS', 'FTK', 'FTQ', 'G01', 'G04', 'G05', 'G06', 'G08', 'G09', 'G10', 'G11', 'G12', 'G13', 'G14', 'G15', 'G16', 'G17', 'G18', 'G19', 'G2', 'G20', 'G21', 'G23', 'G24', 'G25', 'G26', 'G27', 'G28', 'G29', 'G3', 'G30', 'G31', 'G32', 'G33', 'G34', 'G35', 'G36', 'G37', 'G38', 'G39', 'G40', 'G41', 'G42', 'G43', 'G44', 'G45', 'G46', 'G47', 'G48', 'G49', 'G50', 'G51', 'G52', 'G53', 'G54', 'G55', 'G56', 'G57', 'G58', 'G59', 'G60', 'G61', 'G62', 'G63', 'G64', 'G65', 'G66', 'G67', 'G68', 'G69', 'G70', 'G71', 'G72', 'G73', 'G74', 'G75', 'G76', 'G77', 'G78', 'G79', 'G80', 'G81', 'G82', 'G83', 'G84', 'G85', 'G86', 'G87', 'G88', 'G89', 'G90', 'G91', 'G92', 'G93', 'G94', 'G95', 'G96', 'G97', 'G98', 'G99', 'GB', 'GBQ', 'GDW', 'GE', 'GF', 'GFI', 'GGR', 'GIA', 'GIC', 'GII', 'GIP', 'GJ', 'GL', 'GLD', 'GLI', 'GLL', 'GM', 'GO', 'GP', 'GQ', 'GRM', 'GRN', 'GRO', 'GV', 'GWH', 'H03', 'H04', 'H05', 'H06', 'H07', 'H08', 'H09', 'H10', 'H11', 'H12', 'H13', 'H14', 'H15', 'H16', 'H18', 'H19', 'H20', 'H21', 'H22', 'H23', 'H24', 'H25', 'H26', 'H27', 'H28', 'H29', 'H30', 'H31', 'H32', 'H33', 'H34', 'H35', 'H36', 'H37', 'H38', 'H39', 'H40', 'H41', 'H42', 'H43', 'H44', 'H45', 'H46', 'H47', 'H48', 'H49', 'H50', 'H51', 'H52', 'H53', 'H54', 'H55', 'H56', 'H57', 'H58', 'H59', 'H60', 'H61', 'H62', 'H63', 'H64', 'H65', 'H66', 'H67', 'H68', 'H69', 'H70', 'H71', 'H72', 'H73', 'H74', 'H75', 'H76', 'H77', 'H79', 'H80', 'H81', 'H82', 'H83', 'H84', 'H85', 'H87', 'H88', 'H89', 'H90', 'H91', 'H92', 'H93', 'H94', 'H95', 'H96', 'H98', 'H99', 'HA', 'HAD', 'HBA', 'HBX', 'HC', 'HDW', 'HEA', 'HGM', 'HH', 'HIU', 'HKM', 'HLT', 'HM', 'HMO', 'HMQ', 'HMT', 'HPA', 'HTZ', 'HUR', 'HWE', 'IA', 'IE', 'INH', 'INK', 'INQ', 'ISD', 'IU', 'IUG', 'IV', 'J10', 'J12', 'J13', 'J14', 'J15', 'J16', 'J17', 'J18', 'J19', 'J2', 'J20', 'J21', 'J22', 'J23', 'J24', 'J25', 'J26', 'J27', 'J28', 'J29', 'J30', 'J31', 'J32', 'J33', 'J34', 'J35', 'J36', 'J38', 'J39', 'J40', 'J41', 'J42', 'J43', 'J44', 'J45', 'J46', 'J47', 'J48', 'J49', 'J50', 'J51', 'J52', 'J53', 'J54', 'J55', 'J56', 'J57', 'J58', 'J59', 'J60', 'J61', 'J62', 'J63', 'J64', 'J65', 'J66', 'J67', 'J68', 'J69', 'J70', 'J71', 'J72', 'J73', 'J74', 'J75', 'J76', 'J78', 'J79', 'J81', 'J82', 'J83', 'J84', 'J85', 'J87', 'J90', 'J91', 'J92', 'J93', 'J95', 'J96', 'J97', 'J98', 'J99', 'JE', 'JK', 'JM', 'JNT', 'JOU', 'JPS', 'JWL', 'K1', 'K10', 'K11', 'K12', 'K13', 'K14', 'K15', 'K16', 'K17', 'K18', 'K19', 'K2', 'K20', 'K21', 'K22', 'K23', 'K26', 'K27', 'K28', 'K3', 'K30', 'K31', 'K32', 'K33', 'K34', 'K35', 'K36', 'K37', 'K38', 'K39', 'K40', 'K41', 'K42', 'K43', 'K45', 'K46', 'K47', 'K48', 'K49', 'K50', 'K51', 'K52', 'K53', 'K54', 'K55', 'K58', 'K59', 'K6', 'K60', 'K61', 'K62', 'K63', 'K64', 'K65', 'K66', 'K67', 'K68', 'K69', 'K70', 'K71', 'K73', 'K74', 'K75', 'K76', 'K77', 'K78', 'K79', 'K80', 'K81', 'K82', 'K83', 'K84', 'K85', 'K86', 'K87', 'K88', 'K89', 'K90', 'K91', 'K92', 'K93', 'K94', 'K95', 'K96', 'K97', 'K98', 'K99', 'KA', 'KAT', 'KB', 'KBA', 'KCC', 'KDW', 'KEL', 'KGM', 'KGS', 'KHY', 'KHZ', 'KI', 'KIC', 'KIP', 'KJ', 'KJO', 'KL', 'KLK', 'KLX', 'KMA', 'KMH', 'KMK', 'KMQ', 'KMT', 'KNI', 'KNM', 'KNS', 'KNT', 'KO', 'KPA', 'KPH', 'KPO', 'KPP', 'KR', 'KSD', 'KSH', 'KT', 'KTN', 'KUR', 'KVA', 'KVR', 'KVT', 'KW', 'KWH', 'KWN', 'KWO', 'KWS', 'KWT', 'KWY', 'KX', 'L10', 'L11', 'L12', 'L13', 'L14', 'L15', 'L16', 'L17', 'L18', 'L19', 'L2', 'L20', 'L21', 'L23', 'L24', 'L25', 'L26', 'L27', 'L28', 'L29', 'L30', 'L31', 'L32', 'L33', 'L34', 'L35', 'L36', 'L37', 'L38', 'L39', 'L40', 'L41', 'L42', 'L43', 'L44', 'L45', 'L46', 'L47', 'L48', 'L49', 'L50', 'L51', 'L52', 'L53', 'L54', 'L55', 'L56', 'L57', 'L58', 'L59', 'L60', 'L63', 'L64', 'L65', 'L66', 'L67', 'L68', 'L69', 'L70', 'L71', 'L72', 'L73', 'L74', 'L75', 'L76', 'L77', 'L78', 'L79', 'L80', 'L81', 'L82', 'L83', 'L84', 'L85', 'L86', 'L87', 'L88', 'L89', 'L90', 'L91', 'L92', 'L93', 'L94', 'L95', 'L96', 'L98', 'L99', 'LA', 'LAC', 'LBR', 'LBT', 'LD', 'LEF', 'LF', 'LH', 'LK', 'LM', 'LN', 'LO', 'LP', 'LPA', 'LR', 'LS', 'LTN', 'LTR', 'LUB', 'LUM', 'LUX', 'LY', 'M1', 'M10', 'M11', 'M12', 'M13', 'M14', 'M15', 'M16', 'M17', 'M18', 'M19', 'M20', 'M21', 'M22', 'M23', 'M24', 'M25', 'M26', 'M27', 'M29', 'M30', 'M31', 'M32', 'M33', 'M34', 'M35', 'M36', 'M37', 'M38', 'M39', 'M4', 'M40', 'M41', 'M42', 'M43', 'M44', 'M45', 'M46', 'M47', 'M48', 'M49', 'M5', 'M50', 'M51', 'M52', 'M53', 'M55', 'M56', 'M57', 'M58', 'M59', 'M60', 'M61', 'M62', 'M63', 'M64', 'M65', 'M66', 'M67', 'M68', 'M69', 'M7', 'M70', 'M71', 'M72', 'M73', 'M74', 'M75', 'M76', 'M77', 'M78', 'M79', 'M80', 'M81', 'M82', 'M83', 'M84', 'M85', 'M86', 'M87', 'M88', 'M89', 'M9', 'M90', 'M91', 'M92', 'M93', 'M94', 'M95', 'M96', 'M97', 'M98', 'M99', 'MAH', 'MAL', 'MAM', 'MAR', 'MAW', 'MBE', 'MBF', 'MBR', 'MC', 'MCU', 'MD', 'MGM', 'MHZ', 'MIK', 'MIL', 'MIN', 'MIO', 'MIU', 'MKD', 'MKM', 'MKW', 'MLD', 'MLT', 'MMK', 'MMQ', 'MMT', 'MND', 'MNJ', 'MON', 'MPA', 'MQD', 'MQH', 'MQM', 'MQS', 'MQW', 'MRD', 'MRM', 'MRW', 'MSK', 'MTK', 'MTQ', 'MTR', 'MTS', 'MTZ', 'MVA', 'MWH', 'N1', 'N10', 'N11', 'N12', 'N13', 'N14', 'N15', 'N16', 'N17', 'N18', 'N19', 'N20', 'N21', 'N22', 'N23', 'N24', 'N25', 'N26', 'N27', 'N28', 'N29', 'N3', 'N30', 'N31', 'N32', 'N33', 'N34', 'N35', 'N36', 'N37', 'N38', 'N39', 'N40', 'N41', 'N42', 'N43', 'N44', 'N45', 'N46', 'N47', 'N48', 'N49', 'N50', 'N51', 'N52', 'N53', 'N54', 'N55', 'N56', 'N57', 'N58', 'N59', 'N60', 'N61', 'N62', 'N63', 'N64', 'N65', 'N66', 'N67', 'N68', 'N69', 'N70', 'N71', 'N72', 'N73', 'N74', 'N75', 'N76', 'N77', 'N78', 'N79', 'N80', 'N81', 'N82', 'N83', 'N84', 'N85', 'N86', 'N87', 'N88', 'N89', 'N90', 'N91', 'N92', 'N93', 'N94', 'N95', 'N96', 'N97', 'N98', 'N99', 'NA', 'NAR', 'NCL', 'NEW', 'NF', 'NIL', 'NIU', 'NL', 'NM3', 'NMI', 'NMP', 'NPT', 'NT', 'NTU', 'NU', 'NX', 'OA', 'ODE', 'ODG', 'ODK', 'ODM', 'OHM', 'ON', 'ONZ', 'OPM', 'OT', 'OZA', 'OZI', 'P1', 'P10', 'P11', 'P12', 'P13', 'P14', 'P15', 'P16', 'P17', 'P18', 'P19', 'P2', 'P20', 'P21', 'P22', 'P23', 'P24', 'P25', 'P26', 'P27', 'P28', 'P29', 'P30', 'P31', 'P32', 'P33', 'P34', 'P35', 'P36', 'P37', 'P38', 'P39', 'P40', 'P41', 'P42', 'P43', 'P44', 'P45', 'P46', 'P47', 'P48', 'P49', 'P5', 'P50', 'P51', 'P52', 'P53', 'P54', 'P55', 'P56', 'P57', 'P58', 'P59', 'P60', 'P61', 'P62', 'P63', 'P64', 'P65', 'P66', 'P67', 'P68', 'P69', 'P70', 'P71', 'P72', 'P73', 'P74', 'P75', 'P76', 'P77', 'P78', 'P79', 'P80', 'P81', 'P82', 'P83', 'P84', 'P85', 'P86', 'P87', 'P88', 'P89', 'P90', 'P91', 'P92', 'P93', 'P94', 'P95', 'P96', 'P97', 'P98', 'P99', 'PAL', 'PD', 'PFL', 'PGL', 'PI', 'PLA', 'PO', 'PQ', 'PR', 'PS', 'PTD', 'PTI', 'PTL', 'PTN', 'Q10', 'Q11', 'Q12', 'Q13', 'Q14', 'Q15', 'Q16', 'Q17', 'Q18', 'Q19', 'Q20', 'Q21', 'Q22', 'Q23', 'Q24', 'Q25', 'Q26', 'Q27', 'Q28', 'Q29', 'Q3', 'Q30', 'Q31', 'Q32', 'Q33', 'Q34', 'Q35', 'Q36', 'Q37', 'Q38', 'Q39', 'Q40', 'Q41', 'Q42', 'QA', 'QAN', 'QB', 'QR', 'QTD', 'QTI', 'QTL', 'QTR', 'R1', 'R9', 'RH', 'RM', 'ROM', 'RP', 'RPM', 'RPS', 'RT', 'S3', 'S4', 'SAN', 'SCO', 'SCR', 'SEC', 'SET', 'SG', 'SIE', 'SM3', 'SMI', 'SQ', 'SQR', 'SR', 'STC', 'STI', 'STK', 'STL', 'STN', 'STW', 'SW', 'SX', 'SYR', 'T0', 'T3', 'TAH', 'TAN', 'TI', 'TIC', 'TIP', 'TKM', 'TMS', 'TNE', 'TP', 'TPI', 'TPR', 'TQD', 'TRL', 'TST', 'TTS', 'U1', 'U2', 'UB', 'UC', 'VA', 'VLT', 'VP', 'W2', 'WA', 'WB', 'WCD', 'WE', 'WEB', 'WEE', 'WG', 'WHR', 'WM', 'WSD', 'WTT', 'X1', 'X1A', 'X1B', 'X1D', 'X1F', 'X1G', 'X1W', 'X2C', 'X3A', 'X3H', 'X43', 'X44', 'X4A', 'X4B', 'X4C', 'X4D', 'X4F', 'X4G', 'X4H', 'X5H', 'X5L', 'X5M', 'X6H', 'X6P', 'X7A', 'X7B', 'X8A', 'X8B', 'X8C', 'XAA', 'XAB', 'XAC', 'XAD', 'XAE', 'XAF', 'XAG', 'XAH', 'XAI', 'XAJ', 'XAL', 'XAM', 'XAP', 'XAT', 'XAV', 'XB4', 'XBA', 'XBB', 'XBC', 'XBD', 'XBE', 'XBF', 'XBG', 'XBH', 'XBI', 'XBJ', 'XBK', 'XBL', 'XBM', 'XBN', 'XBO', 'XBP', 'XBQ', 'XBR', 'XBS', 'XBT', 'XBU', 'XBV', 'XBW', 'XBX', 'XBY', 'XBZ', 'XCA', 'XCB', 'XCC', 'XCD', 'XCE', 'XCF', 'XCG', 'XCH', 'XCI', 'XCJ', 'XCK', 'XCL', 'XCM', 'XCN', 'XCO', 'XCP', 'XCQ', 'XCR', 'XCS', 'XCT', 'XCU', 'XCV', 'XCW', 'XCX', 'XCY', 'XCZ', 'XDA', 'XDB', 'XDC', 'XDG', 'XDH', 'XDI', 'XDJ', 'XDK', 'XDL', 'XDM', 'XDN', 'XDP', 'XDR', 'XDS', 'XDT', 'XDU', 'XDV', 'XDW', 'XDX', 'XDY', 'XEC', 'XED', 'XEE', 'XEF', 'XEG', 'XEH', 'XEI', 'XEN', 'XFB', 'XFC', 'XFD', 'XFE', 'XFI', 'XFL', 'XFO', 'XFP', 'XFR', 'XFT', 'XFW', 'XFX', 'XGB', 'XGI', 'XGL', 'XGR', 'XGU', 'XGY', 'XGZ', 'XHA', 'XHB', 'XHC', 'XHG', 'XHN', 'XHR', 'XIA', 'XIB', 'XIC', 'XID', 'XIE', 'XIF', 'XIG', 'XIH', 'XIK', 'XIL', 'XIN', 'XIZ', 'XJB', 'XJC', 'XJG', 'XJR', 'XJT', 'XJY', 'XKG', 'XKI', 'XLE', 'XLG', 'XLT', 'XLU', 'XLV', 'XLZ', 'XMA', 'XMB', 'XMC', 'XME', 'XMR', 'XMS', 'XMT', 'XMW', 'XMX', 'XNA', 'XNE', 'XNF', 'XNG', 'XNS', 'XNT', 'XNU', 'XNV', 'XO1', 'XO2', 'XO3', 'XO4', 'XO5', 'XO6', 'XO7', 'XO8', 'XO9', 'XOA', 'XOB', 'XOC', 'XOD', 'XOE', 'XOF', 'XOG', 'XOH', 'XOI', 'XOJ', 'XOK', 'XOL', 'XOM', 'XON', 'XOP', 'XOQ', 'XOR', 'XOS', 'XOT', 'XOU', 'XOV', 'XOW', 'XOX', 'XOY', 'XOZ', 'XP1', 'XP2', 'XP3', 'XP4', 'XPA', 'XPB', 'XPC', 'XPD', 'XPE', 'XPF', 'XPG', 'XPH', 'XPI', 'XPJ', 'XPK', 'XPL', 'XPN', 'XPO', 'XPP', 'XPR', 'XPT', 'XPU', 'XPV', 'XPX', 'XPY', 'XPZ', 'XQA', 'XQB', 'XQC', 'XQD', 'XQF', 'XQG', 'XQH', 'XQJ', 'XQK', 'XQL', 'XQM', 'XQN', 'XQP', 'XQQ', 'XQR', 'XQS', 'XRD', 'XRG', 'XRJ', 'XRK', 'XRL', 'XRO', 'XRT', 'XRZ', 'XSA', 'XSB', 'XSC', 'XSD', 'XSE', 'XSH', 'XSI', 'XSK', 'XSL', 'XSM', 'XSO', 'XSP', 'XSS', 'XST', 'XSU', 'XSV', 'XSW', 'XSX', 'XSY', 'XSZ', 'XT1', 'XTB', 'XTC', 'XTD', 'XTE', 'XTG', 'XTI', 'XTK', 'XTL', 'XTN', 'XTO', 'XTR', 'XTS', 'XTT', 'XTU', 'XTV', 'XTW', 'XTY', 'XTZ', 'XUC', 'XUN', 'XVA', 'XVG', 'XVI', 'XVK', 'XVL', 'XVN', 'XVO', 'XVP', 'XVQ', 'XVR', 'XVS', 'XVY', 'XWA', 'XWB', 'XWC', 'XWD', 'XWF', 'XWG', 'XWH', 'XWJ', 'XWK', 'XWL', 'XWM', 'XWN', 'XWP', 'XWQ', 'XWR', 'XWS', 'XWT', 'XWU', 'XWV', 'XWW', 'XWX', 'XWY', 'XWZ', 'XXA', 'XXB', 'XXC', 'XXD', 'XXF', 'XXG', 'XXH', 'XXJ', 'XXK', 'XYA', 'XYB', 'XYC', 'XYD', 'XYF', 'XYG', 'XYH', 'XYJ', 'XYK', 'XYL', 'XYM', 'XYN', 'XYP', 'XYQ', 'XYR', 'XYS', 'XYT', 'XYV', 'XYW', 'XYX', 'XYY', 'XYZ', 'XZA', 'XZB', 'XZC', 'XZD', 'XZF', 'XZG', 'XZH', 'XZJ', 'XZK', 'XZL', 'XZM', 'XZN', 'XZP', 'XZQ', 'XZR', 'XZS', 'XZT', 'XZU', 'XZV', 'XZW', 'XZX', 'XZY', 'XZZ', 'YDK', 'YDQ', 'YRD', 'Z11', 'Z9', 'ZP', 'ZZ' );
	/** Allowance reason codes (UNCL5189), as BR-CL-19 lists them (the core's codes::ALLOWANCE_REASONS). */
	const ALLOWANCE_REASONS = array( '100', '102', '103', '104', '105', '41', '42', '60', '62', '63', '64', '65', '66', '67', '68', '70', '71', '88', '95' );
	/** Charge reason codes (UNCL7161), as BR-CL-20 lists them (the core's codes::CHARGE_REASONS). */
	const CHARGE_REASONS = array( 'AA', 'AAA', 'AAC', 'AAD', 'AAE', 'AAF', 'AAH', 'AAI', 'AAS', 'AAT', 'AAV', 'AAY', 'AAZ', 'ABA', 'ABB', 'ABC', 'ABD', 'ABF', 'ABK', 'ABL', 'ABN', 'ABR', 'ABS', 'ABT', 'ABU', 'ACF', 'ACG', 'ACH', 'ACI', 'ACJ', 'ACK', 'ACL', 'ACM', 'ACS', 'ADC', 'ADE', 'ADJ', 'ADK', 'ADL', 'ADM', 'ADN', 'ADO', 'ADP', 'ADQ', 'ADR', 'ADT', 'ADW', 'ADY', 'ADZ', 'AEA', 'AEB', 'AEC', 'AED', 'AEF', 'AEH', 'AEI', 'AEJ', 'AEK', 'AEL', 'AEM', 'AEN', 'AEO', 'AEP', 'AES', 'AET', 'AEU', 'AEV', 'AEW', 'AEX', 'AEY', 'AEZ', 'AJ', 'AU', 'CA', 'CAB', 'CAD', 'CAE', 'CAF', 'CAI', 'CAJ', 'CAK', 'CAL', 'CAM', 'CAN', 'CAO', 'CAP', 'CAQ', 'CAR', 'CAS', 'CAT', 'CAU', 'CAV', 'CAW', 'CAX', 'CAY', 'CAZ', 'CD', 'CG', 'CS', 'CT', 'DAB', 'DAC', 'DAD', 'DAF', 'DAG', 'DAH', 'DAI', 'DAJ', 'DAK', 'DAL', 'DAM', 'DAN', 'DAO', 'DAP', 'DAQ', 'DL', 'EG', 'EP', 'ER', 'FAA', 'FAB', 'FAC', 'FC', 'FH', 'FI', 'GAA', 'HAA', 'HD', 'HH', 'IAA', 'IAB', 'ID', 'IF', 'IR', 'IS', 'KO', 'L1', 'LA', 'LAA', 'LAB', 'LF', 'MAE', 'MI', 'ML', 'NAA', 'OA', 'PA', 'PAA', 'PC', 'PL', 'PRV', 'RAB', 'RAC', 'RAD', 'RAF', 'RE', 'RF', 'RH', 'RV', 'SA', 'SAA', 'SAD', 'SAE', 'SAI', 'SG', 'SH', 'SM', 'SU', 'TAB', 'TAC', 'TT', 'TV', 'V1', 'V2', 'WH', 'XAA', 'YY', 'ZZZ' );
	/**
	 * The VATEX codes a category other than exempt (E) takes, each only its
	 * own (the core's vat::CATEGORY_CODES).
	 */
	const CATEGORY_CODES = array(
		'AE' => array( 'VATEX-EU-AE', 'VATEX-FR-AE' ),
		'K'  => array( 'VATEX-EU-IC' ),
		'G'  => array( 'VATEX-EU-G' ),
		'O'  => array( 'VATEX-EU-O' ),
	);
	/** Credit transfer codes: BR-61 asks the payee's account with them (settlement::CREDIT_TRANSFER). */
	const CREDIT_TRANSFER = array( '30', '58' );
	/** Direct debit codes: Peppol asks the mandate with them (settlement::DIRECT_DEBIT). */
	const DIRECT_DEBIT = array( '49', '59' );
	/** Payment means Dutch invoices take (NL-R-008; peppol::NL_MEANS). */
	const NL_MEANS = array( '30', '48', '49', '57', '58', '59' );
	/** Payment means Danish invoices between Danish parties take (DK-R-005; peppol::DK_MEANS). */
	const DK_MEANS = array( '1', '10', '31', '42', '48', '49', '50', '58', '59', '93', '97' );

	// Decimals: [mantissa, scale]; null where the core's Option is None.

	/** Parses a plain decimal string (at most 9 decimals, 18 digits), or null. */
	public static function dec( $text ) {
		if ( ! is_string( $text ) || ! preg_match( '/^(-?)([0-9]+)(?:\.([0-9]+))?\z/', $text, $m ) ) {
			return null;
		}
		$fraction = isset( $m[3] ) ? $m[3] : '';
		if ( strlen( $fraction ) > 9 || strlen( $m[2] ) + strlen( $fraction ) > 18 ) {
			return null;
		}
		$mantissa = (int) ( $m[2] . $fraction );
		return array( '-' === $m[1] ? -$mantissa : $mantissa, strlen( $fraction ) );
	}

	/** 10^$n as an integer, or null. */
	private static function pow10( $n ) {
		if ( $n < 0 || $n > 18 ) {
			return null;
		}
		return (int) ( '1' . str_repeat( '0', $n ) );
	}

	/** $a × $b when it fits in an integer, or null. */
	private static function imul( $a, $b ) {
		if ( null === $a || null === $b ) {
			return null;
		}
		$r = $a * $b;
		return is_int( $r ) ? $r : null;
	}

	private static function rescaled( $d, $scale ) {
		return null === $d || $scale < $d[1] ? null : self::imul( $d[0], self::pow10( $scale - $d[1] ) );
	}

	/** The sum, or null. */
	public static function add( $a, $b ) {
		if ( null === $a || null === $b ) {
			return null;
		}
		$scale = max( $a[1], $b[1] );
		$x     = self::rescaled( $a, $scale );
		$y     = self::rescaled( $b, $scale );
		if ( null === $x || null === $y ) {
			return null;
		}
		$r = $x + $y;
		return is_int( $r ) ? array( $r, $scale ) : null;
	}

	/** The difference, or null. */
	public static function sub( $a, $b ) {
		if ( null === $b ) {
			return null;
		}
		$n = -$b[0];
		return is_int( $n ) ? self::add( $a, array( $n, $b[1] ) ) : null;
	}

	/** The exact product, or null. */
	public static function mul( $a, $b ) {
		if ( null === $a || null === $b ) {
			return null;
		}
		$m = self::imul( $a[0], $b[0] );
		return null === $m ? null : array( $m, $a[1] + $b[1] );
	}

	/** Rounded to $places, half away from zero, or null. */
	public static function round( $d, $places ) {
		if ( null === $d ) {
			return null;
		}
		if ( $d[1] <= $places ) {
			$m = self::rescaled( $d, $places );
			return null === $m ? null : array( $m, $places );
		}
		$divisor = self::pow10( $d[1] - $places );
		if ( null === $divisor ) {
			return null;
		}
		$quotient  = intdiv( $d[0], $divisor );
		$remainder = abs( $d[0] % $divisor );
		if ( $remainder >= $divisor - $remainder ) {
			$quotient += $d[0] <=> 0;
		}
		return array( $quotient, $places );
	}

	/** -1, 0 or 1. */
	public static function cmp( $a, $b ) {
		$scale = max( $a[1], $b[1] );
		$x     = self::rescaled( $a, $scale );
		$y     = self::rescaled( $b, $scale );
		if ( null !== $x && null !== $y ) {
			return $x <=> $y;
		}
		// Digit by digit when a rescale does not fit (the core's cmp_by_digits).
		if ( ( $a[0] < 0 ) !== ( $b[0] < 0 ) ) {
			return $a[0] < 0 ? -1 : 1;
		}
		$parts = function ( $d ) use ( $scale ) {
			$t = ltrim( self::str( $d ), '-' );
			$w = explode( '.', $t . '.' );
			return array( strlen( $w[0] ), $w[0], str_pad( $w[1], $scale, '0' ) );
		};
		$pa    = $parts( $a );
		$pb    = $parts( $b );
		$ord   = $pa[0] <=> $pb[0];
		$ord   = 0 !== $ord ? $ord : ( strcmp( $pa[1], $pb[1] ) <=> 0 );
		$ord   = 0 !== $ord ? $ord : ( strcmp( $pa[2], $pb[2] ) <=> 0 );
		return $a[0] < 0 ? -$ord : $ord;
	}

	/** Written as a plain decimal with its scale. */
	public static function str( $d ) {
		$digits = PHP_INT_MIN === $d[0] ? substr( (string) PHP_INT_MIN, 1 ) : (string) abs( $d[0] );
		$sign   = $d[0] < 0 ? '-' : '';
		if ( 0 === $d[1] ) {
			return $sign . $digits;
		}
		$digits = str_pad( $digits, $d[1] + 1, '0', STR_PAD_LEFT );
		return $sign . substr( $digits, 0, -$d[1] ) . '.' . substr( $digits, -$d[1] );
	}

	/** Written without trailing zeros after the point. */
	public static function trimmed( $d ) {
		while ( $d[1] > 0 && 0 === $d[0] % 10 ) {
			$d = array( intdiv( $d[0], 10 ), $d[1] - 1 );
		}
		return self::str( $d );
	}

	// The input, read as the core's json.rs reads it.

	/**
	 * A field's string, or null when it is absent or not a string (the
	 * core's `json::text`: a field of the wrong type reads as absent).
	 *
	 * @param mixed  $a   Object (an array), or anything else.
	 * @param string $key Field.
	 * @return string|null
	 */
	private static function opt( $a, $key ) {
		return is_array( $a ) && isset( $a[ $key ] ) && is_string( $a[ $key ] ) ? $a[ $key ] : null;
	}

	/**
	 * Whether $s is blank as the core's `str::trim` sees it: nothing but
	 * Unicode white space (which PHP's trim() does not all know).
	 *
	 * @param string $s Text.
	 * @return bool
	 */
	public static function blank( $s ) {
		return 1 === preg_match( '/^(?:[\x09-\x0D\x20]|\xC2[\x85\xA0]|\xE1\x9A\x80|\xE2\x80[\x80-\x8A\xA8\xA9\xAF]|\xE2\x81\x9F|\xE3\x80\x80)*\z/', (string) $s );
	}

	/** A text when present and not blank, else null (the core's `Party::text`). */
	private static function text( $v ) {
		return is_string( $v ) && ! self::blank( $v ) ? $v : null;
	}

	/** A party's (or any object's) field when present and not blank, else null. */
	private static function ptext( $p, $key ) {
		return self::text( self::opt( $p, $key ) );
	}

	/** Whether a PHP array is what wp_json_encode() writes as a JSON array. */
	private static function is_list( array $a ) {
		return array() === $a || array_keys( $a ) === range( 0, count( $a ) - 1 );
	}

	/**
	 * An amount given as a decimal string (the core's `json::amount`):
	 * absent or null is null; any other value that is not a decimal string
	 * is refused naming $term.
	 *
	 * @param array  $a    Object.
	 * @param string $key  Field.
	 * @param string $term Business term.
	 * @return array|null
	 * @throws Counterfoil_Einvoice_Refusal Not a decimal string.
	 */
	private static function amount( array $a, $key, $term ) {
		if ( ! array_key_exists( $key, $a ) || null === $a[ $key ] ) {
			return null;
		}
		$d = self::dec( $a[ $key ] );
		if ( null === $d ) {
			throw new Counterfoil_Einvoice_Refusal( $term, "`$key` is not a decimal string such as \"0.01\"" );
		}
		return $d;
	}

	/**
	 * The input as the core reads it from JSON (json::input): the lines
	 * (BG-25 for one without its decimals or category, BT-117 for a VAT
	 * amount that is not a decimal string), the rounding amount (BT-114),
	 * the paid amount (BT-113), the notes (BT-22), the VAT in the
	 * accounting currency (BT-111), the allowances (BG-20) and the charges
	 * (BG-21), in that order, before any other check.
	 *
	 * @param array $in The vectors' shape.
	 * @return array Every field: string or null where the core's is an
	 *               Option<String>, decimals as [mantissa, scale] or null.
	 * @throws Counterfoil_Einvoice_Refusal Naming the business term.
	 */
	private static function read( array $in ) {
		$lines = array();
		$given = isset( $in['lines'] ) && is_array( $in['lines'] ) && self::is_list( $in['lines'] ) ? $in['lines'] : array();
		foreach ( $given as $i => $l ) {
			$l        = is_array( $l ) ? $l : array();
			$quantity = self::dec( self::opt( $l, 'quantity' ) );
			$price    = self::dec( self::opt( $l, 'unit_price' ) );
			$rate     = self::dec( self::opt( $l, 'vat_rate' ) );
			$category = self::opt( $l, 'vat_category' );
			if ( null === $quantity || null === $price || null === $rate || ! in_array( $category, self::CATEGORIES, true ) ) {
				throw new Counterfoil_Einvoice_Refusal( 'BG-25', 'line ' . ( $i + 1 ) . ' needs quantity, unit_price and vat_rate as decimal strings and a VAT category (S, Z, E, AE, K, G, O)' );
			}
			$lines[] = array(
				'name'                 => (string) self::opt( $l, 'name' ),
				'quantity'             => $quantity,
				'price'                => $price,
				'rate'                 => $rate,
				'category'             => $category,
				'unit_code'            => self::opt( $l, 'unit_code' ),
				'seller_item_id'       => self::opt( $l, 'seller_item_id' ),
				'gtin'                 => self::opt( $l, 'gtin' ),
				'vat_exemption_code'   => self::opt( $l, 'vat_exemption_code' ),
				'vat_exemption_reason' => self::opt( $l, 'vat_exemption_reason' ),
				'vat_amount'           => self::amount( $l, 'vat_amount', 'BT-117' ),
			);
		}
		$credit     = 'credit_note' === self::opt( $in, 'kind' );
		$rounding   = self::amount( $in, 'rounding', 'BT-114' );
		$paid       = self::amount( $in, 'paid_amount', 'BT-113' );
		$deliver_to = null;
		if ( isset( $in['deliver_to'] ) && is_array( $in['deliver_to'] ) && ! self::is_list( $in['deliver_to'] ) ) {
			$a          = $in['deliver_to'];
			$deliver_to = array(
				'name'     => self::opt( $a, 'name' ),
				'street'   => self::opt( $a, 'street' ),
				'city'     => self::opt( $a, 'city' ),
				'postcode' => self::opt( $a, 'postcode' ),
				'country'  => (string) self::opt( $a, 'country' ),
			);
		}
		$notes = array();
		if ( isset( $in['notes'] ) ) {
			$bad = new Counterfoil_Einvoice_Refusal( 'BT-22', '`notes` is a list of texts or of { "subject", "text" }' );
			if ( ! is_array( $in['notes'] ) || ! self::is_list( $in['notes'] ) ) {
				throw $bad;
			}
			foreach ( $in['notes'] as $n ) {
				if ( is_string( $n ) ) {
					$notes[] = array(
						'subject' => null,
						'text'    => $n,
					);
				} elseif ( is_array( $n ) && null !== self::opt( $n, 'text' ) ) {
					$notes[] = array(
						'subject' => self::opt( $n, 'subject' ),
						'text'    => self::opt( $n, 'text' ),
					);
				} else {
					throw $bad;
				}
			}
		}
		return array(
			'credit'                 => $credit,
			'preceding'              => $credit ? (string) self::opt( $in, 'preceding' ) : '',
			'preceding_date'         => $credit ? self::opt( $in, 'preceding_date' ) : null,
			'number'                 => (string) self::opt( $in, 'number' ),
			'issue_date'             => (string) self::opt( $in, 'issue_date' ),
			'currency'               => (string) self::opt( $in, 'currency' ),
			'buyer_reference'        => self::opt( $in, 'buyer_reference' ),
			'seller'                 => isset( $in['seller'] ) && is_array( $in['seller'] ) ? $in['seller'] : array(),
			'buyer'                  => isset( $in['buyer'] ) && is_array( $in['buyer'] ) ? $in['buyer'] : array(),
			'lines'                  => $lines,
			'paid'                   => isset( $in['paid'] ) && true === $in['paid'],
			'due_date'               => self::opt( $in, 'due_date' ),
			'payment_terms'          => self::opt( $in, 'payment_terms' ),
			'rounding'               => $rounding,
			'paid_amount'            => $paid,
			'payment_means'          => self::opt( $in, 'payment_means' ),
			'mandate_reference'      => self::opt( $in, 'mandate_reference' ),
			'remittance_information' => self::opt( $in, 'remittance_information' ),
			'order_reference'        => self::opt( $in, 'order_reference' ),
			'sales_order_reference'  => self::opt( $in, 'sales_order_reference' ),
			'supply_date'            => self::opt( $in, 'supply_date' ),
			'period_start'           => self::opt( $in, 'period_start' ),
			'period_end'             => self::opt( $in, 'period_end' ),
			'deliver_to'             => $deliver_to,
			'notes'                  => $notes,
			'business_process'       => self::opt( $in, 'business_process' ),
			'tax_currency'           => self::opt( $in, 'tax_currency' ),
			'vat_in_tax_currency'    => self::amount( $in, 'vat_in_tax_currency', 'BT-111' ),
			'allowances'             => self::read_allowance_charges( $in, 'allowances', 'BG-20' ),
			'charges'                => self::read_allowance_charges( $in, 'charges', 'BG-21' ),
		);
	}

	/**
	 * The allowances or the charges as the core reads them
	 * (json::allowance_charges): absent or null is none; a list of objects
	 * whose `amount` and `vat_rate` are decimal strings and whose
	 * `vat_category` is a UNCL5305 code when given, else refused naming
	 * $term; `reason` and `reason_code` are texts (of another type: absent).
	 *
	 * @param array  $in   The input.
	 * @param string $key  `allowances` or `charges`.
	 * @param string $term BG-20 or BG-21.
	 * @return array Each: amount, vat_rate (decimals or null), vat_category,
	 *               reason, reason_code (string or null).
	 * @throws Counterfoil_Einvoice_Refusal Naming $term.
	 */
	private static function read_allowance_charges( array $in, $key, $term ) {
		if ( ! array_key_exists( $key, $in ) || null === $in[ $key ] ) {
			return array();
		}
		if ( ! is_array( $in[ $key ] ) || ! self::is_list( $in[ $key ] ) ) {
			throw new Counterfoil_Einvoice_Refusal( $term, "`$key` is a list of { \"amount\", \"reason\", \"reason_code\", \"vat_category\", \"vat_rate\" }" );
		}
		$out = array();
		foreach ( $in[ $key ] as $i => $a ) {
			$wrong = new Counterfoil_Einvoice_Refusal( $term, "$key " . ( $i + 1 ) . ': an object whose amount and vat_rate are decimal strings and whose vat_category is one of S, Z, E, AE, K, G, O' );
			if ( ! is_array( $a ) || ( array() !== $a && self::is_list( $a ) ) ) {
				throw $wrong;
			}
			// In the core's order: the amount, the category, the rate.
			$dec      = function ( $field ) use ( $a, $wrong ) {
				if ( ! array_key_exists( $field, $a ) || null === $a[ $field ] ) {
					return null;
				}
				$d = self::dec( $a[ $field ] );
				if ( null === $d ) {
					throw $wrong;
				}
				return $d;
			};
			$amount   = $dec( 'amount' );
			$category = null;
			if ( array_key_exists( 'vat_category', $a ) && null !== $a['vat_category'] ) {
				if ( ! in_array( $a['vat_category'], self::CATEGORIES, true ) ) {
					throw $wrong;
				}
				$category = $a['vat_category'];
			}
			$out[] = array(
				'amount'       => $amount,
				'reason'       => self::opt( $a, 'reason' ),
				'reason_code'  => self::opt( $a, 'reason_code' ),
				'vat_category' => $category,
				'vat_rate'     => $dec( 'vat_rate' ),
			);
		}
		return $out;
	}

	// The document.

	/** Whether $s is a day YYYY-MM-DD of the calendar (the core's export::is_day). */
	private static function is_date( $s ) {
		if ( ! is_string( $s ) || ! preg_match( '/^([0-9]{4})-([0-9]{2})-([0-9]{2})\z/', $s, $m ) ) {
			return false;
		}
		$year  = (int) $m[1];
		$month = (int) $m[2];
		$day   = (int) $m[3];
		$leap  = 0 === $year % 4 && ( 0 !== $year % 100 || 0 === $year % 400 );
		$days  = array( 31, $leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 );
		return $month >= 1 && $month <= 12 && $day >= 1 && $day <= $days[ $month - 1 ];
	}

	/** Decimals a currency's amounts are written with: 0 or 2 (the core's model::document_places). */
	private static function places( $currency ) {
		return in_array( $currency, Counterfoil_Rules::ZERO_DECIMAL, true ) ? 0 : 2;
	}

	/**
	 * The payment terms' check (the core's terms::check): BT-9 a real day,
	 * not before the issue date, never on a credit note; an amount due
	 * needs a due date or terms (BR-CO-25).
	 *
	 * @param array $in  From read().
	 * @param array $due Amount due.
	 * @throws Counterfoil_Einvoice_Refusal Naming BT-9.
	 */
	private static function check_terms( array $in, array $due ) {
		$date = self::text( $in['due_date'] );
		if ( null !== $date ) {
			if ( $in['credit'] ) {
				throw new Counterfoil_Einvoice_Refusal( 'BT-9', 'payment due date is invalid: a credit note has no due date in UBL 2.1: state payment terms (BT-20)' );
			}
			if ( ! self::is_date( $date ) ) {
				throw new Counterfoil_Einvoice_Refusal( 'BT-9', "payment due date is invalid: `$date` is not a date YYYY-MM-DD" );
			}
			if ( strcmp( $date, $in['issue_date'] ) < 0 ) {
				throw new Counterfoil_Einvoice_Refusal( 'BT-9', 'payment due date is invalid: ' . $date . ' is before the issue date ' . $in['issue_date'] );
			}
		}
		if ( $due[0] > 0 && null === $date && null === self::text( $in['payment_terms'] ) ) {
			throw new Counterfoil_Einvoice_Refusal( 'BT-9', 'payment due date is missing: BR-CO-25: an amount due for payment needs a due date (BT-9) or payment terms (BT-20)' );
		}
	}

	private static function fits( $v, $term, $what ) {
		if ( null === $v ) {
			throw new Counterfoil_Einvoice_Refusal( $term, "$what: too large to compute exactly" );
		}
		return $v;
	}

	/**
	 * Checks the input (the vectors' shape) and computes every amount (the
	 * core's Document::build, its checks in its order).
	 *
	 * @param array $in kind, number, issue_date, currency, buyer_reference,
	 *                  paid, paid_amount, rounding, due_date, payment_terms,
	 *                  preceding, preceding_date, seller, buyer, lines and the
	 *                  details (payment means, orders, supply, notes, …).
	 * @return array The document: the input as read plus lines (with net),
	 *               breakdown, totals, places, paid_in_full, means.
	 * @throws Counterfoil_Einvoice_Refusal Naming the business term.
	 */
	public static function document( array $in ) {
		$in = self::read( $in );
		if ( self::blank( $in['number'] ) ) {
			throw new Counterfoil_Einvoice_Refusal( 'BT-1', 'invoice number is missing (BR-02)' );
		}
		if ( ! self::is_date( $in['issue_date'] ) ) {
			throw new Counterfoil_Einvoice_Refusal( 'BT-2', 'the issue date is not a date YYYY-MM-DD' );
		}
		$currency = $in['currency'];
		if ( ! preg_match( '/^[A-Za-z]{3}\z/', $currency ) ) {
			throw new Counterfoil_Einvoice_Refusal( 'BT-5', 'a currency is a three-letter ISO code such as EUR' );
		}
		$currency = strtoupper( $currency );
		if ( ! in_array( $currency, self::CURRENCIES, true ) ) {
			throw new Counterfoil_Einvoice_Refusal( 'BT-5', "`$currency` is not an ISO 4217 currency code (BR-CL-04)" );
		}
		if ( $in['credit'] ) {
			if ( self::blank( $in['preceding'] ) ) {
				throw new Counterfoil_Einvoice_Refusal( 'BT-25', 'a credit note names the invoice it corrects' );
			}
			if ( null !== $in['preceding_date'] && ! self::is_date( $in['preceding_date'] ) ) {
				throw new Counterfoil_Einvoice_Refusal( 'BT-26', 'the preceding invoice date is not a date YYYY-MM-DD' );
			}
		}
		$seller = $in['seller'];
		$buyer  = $in['buyer'];
		self::check_party( $seller, true );
		self::check_party( $buyer, false );
		if ( empty( $in['lines'] ) ) {
			throw new Counterfoil_Einvoice_Refusal( 'BG-25', 'an invoice has at least one line (BR-16)' );
		}
		$places    = self::places( $currency );
		$lines     = array();
		$breakdown = array();
		foreach ( $in['lines'] as $l ) {
			if ( self::blank( $l['name'] ) ) {
				throw new Counterfoil_Einvoice_Refusal( 'BT-153', 'every line names its item (BR-25)' );
			}
			if ( $l['price'][0] < 0 ) {
				throw new Counterfoil_Einvoice_Refusal( 'BT-146', 'a price is not negative (BR-27)' );
			}
			if ( 0 === $l['quantity'][0] ) {
				throw new Counterfoil_Einvoice_Refusal( 'BT-129', 'a line bills a quantity other than zero' );
			}
			$category = $l['category'];
			$zero     = 0 === $l['rate'][0];
			if ( 'S' === $category ? ( $zero || $l['rate'][0] < 0 ) : ! $zero ) {
				throw new Counterfoil_Einvoice_Refusal( 'BT-152', "category $category takes " . ( 'S' === $category ? 'a rate above 0' : 'the rate 0' ) );
			}
			self::check_exemption( $l );
			self::check_line( $l );
			self::check_category_parties( $category, $seller, $buyer );
			// Rounded once, to the currency's places (a zero-decimal
			// currency's line of 10.5 yen is 11 yen: BR-DEC allows 2).
			$net    = self::fits( self::round( self::mul( $l['quantity'], $l['price'] ), $places ), 'BT-131', 'invoice line net amount' );
			$stated = null === $l['vat_amount'] ? null : self::fits( self::round( $l['vat_amount'], $places ), 'BT-117', 'VAT category tax amount' );
			if ( null !== $stated && 0 !== $stated[0] && 'S' !== $category ) {
				throw new Counterfoil_Einvoice_Refusal( 'BT-117', "a line of category $category charges no VAT" );
			}
			$at = self::join_breakdown( $breakdown, $category, $l['rate'], $net, $places );
			$b  = &$breakdown[ $at ];
			++$b['lines'];
			if ( null !== $stated ) {
				++$b['stating'];
				$b['stated'] = self::fits( self::add( $b['stated'], $stated ), 'BT-117', 'VAT category tax amount' );
			}
			foreach ( array(
				'exemption_code'   => array( 'vat_exemption_code', 'BT-121' ),
				'exemption_reason' => array( 'vat_exemption_reason', 'BT-120' ),
			) as $kept => $from ) {
				$g = self::text( $l[ $from[0] ] );
				if ( null !== $g ) {
					if ( null !== $b[ $kept ] && $b[ $kept ] !== $g ) {
						throw new Counterfoil_Einvoice_Refusal( $from[1], "lines of category $category at " . self::str( $l['rate'] ) . " % give two ({$b[ $kept ]}, $g): a VAT breakdown states one" );
					}
					$b[ $kept ] = $g;
				}
			}
			unset( $b );
			$lines[] = $l + array( 'net' => $net );
		}
		$allowance_charges = array();
		foreach ( array(
			'allowances' => false,
			'charges'    => true,
		) as $key => $charge ) {
			foreach ( $in[ $key ] as $a ) {
				$allowance_charges[] = self::check_allowance_charge( $a, $charge, $seller, $buyer, $places );
			}
		}
		foreach ( $allowance_charges as $a ) {
			$signed = $a['charge'] ? $a['amount'] : self::fits( self::sub( array( 0, $places ), $a['amount'] ), 'BT-116', 'VAT category taxable amount' );
			$at     = self::join_breakdown( $breakdown, $a['category'], $a['rate'], $signed, $places );
			++$breakdown[ $at ]['adjustments'];
		}
		$zero = array( 0, $places );
		$vat  = $zero;
		foreach ( $breakdown as &$b ) {
			$computed = self::fits( self::round( self::mul( self::mul( $b['base'], $b['rate'] ), array( 1, 2 ) ), $places ), 'BT-117', 'VAT category tax amount' );
			$b['tax'] = self::stated_tax( $b, $computed, $places );
			if ( null === $b['exemption_reason'] && isset( self::EXEMPTION[ $b['category'] ] ) ) {
				$b['exemption_reason'] = self::EXEMPTION[ $b['category'] ];
			}
			$vat = self::fits( self::add( $vat, $b['tax'] ), 'BT-110', 'invoice total VAT amount' );
		}
		unset( $b );
		$sum = $zero;
		foreach ( $lines as $l ) {
			$sum = self::fits( self::add( $sum, $l['net'] ), 'BT-106', 'sum of invoice line net amounts' );
		}
		$allowances = $zero;
		$charges    = $zero;
		foreach ( $allowance_charges as $a ) {
			if ( $a['charge'] ) {
				$charges = self::fits( self::add( $charges, $a['amount'] ), 'BT-108', 'sum of charges on document level' );
			} else {
				$allowances = self::fits( self::add( $allowances, $a['amount'] ), 'BT-107', 'sum of allowances on document level' );
			}
		}
		$less        = self::sub( $sum, $allowances );
		$without_vat = self::fits( null === $less ? null : self::add( $less, $charges ), 'BT-109', 'invoice total amount without VAT' );
		// Without allowances or charges, the lines' total is refused as
		// before (BT-112 below): the refusals of a frozen input stay.
		if ( $without_vat[0] < 0 && ! empty( $allowance_charges ) ) {
			throw new Counterfoil_Einvoice_Refusal( 'BT-109', 'the allowances (' . self::str( $allowances ) . ') take more than the lines (' . self::str( $sum ) . ') and the charges (' . self::str( $charges ) . ') come to' );
		}
		$with_vat = self::fits( self::add( $without_vat, $vat ), 'BT-112', 'invoice total amount with VAT' );
		$rounding = null;
		if ( null !== $in['rounding'] ) {
			if ( $in['rounding'][1] > 2 ) {
				throw new Counterfoil_Einvoice_Refusal( 'BT-114', self::str( $in['rounding'] ) . ' has more than the 2 decimals an amount has' );
			}
			$rounding = self::fits( self::round( $in['rounding'], $places ), 'BT-114', 'rounding amount' );
		}
		// BR-CO-16: due = with VAT - paid + rounding; paid in full pays both.
		$payable = self::fits( self::add( $with_vat, null === $rounding ? $zero : $rounding ), 'BT-115', 'amount due for payment' );
		$paid    = self::paid( $in, $payable, $places );
		$due     = self::fits( self::sub( $payable, $paid ), 'BT-115', 'amount due for payment' );
		if ( $with_vat[0] < 0 ) {
			throw new Counterfoil_Einvoice_Refusal( 'BT-112', 'a credit note states positive amounts; this total is negative' );
		}
		if ( $payable[0] < 0 ) {
			throw new Counterfoil_Einvoice_Refusal( 'BT-114', 'the amount payable (with VAT, plus the rounding) is negative' );
		}
		self::check_terms( $in, $due );
		self::check_settlement( $in, $due );
		self::check_details( $in );
		self::check_national( $in, $due );
		return array(
			'currency'        => $currency,
			'buyer_reference' => self::text( $in['buyer_reference'] ),
			'due_date'        => $in['credit'] ? null : self::text( $in['due_date'] ),
			'payment_terms'   => self::text( $in['payment_terms'] ),
			'lines'             => $lines,
			'allowance_charges' => $allowance_charges,
			'breakdown'         => $breakdown,
			'places'          => $places,
			'paid_in_full'    => null === $in['paid_amount'] ? $in['paid'] : 0 === $due[0] && $paid[0] > 0,
			'means'           => self::means( $in, $due ),
			'totals'          => array(
				'lines'       => $sum,
				'allowances'  => $allowances,
				'charges'     => $charges,
				'without_vat' => $without_vat,
				'vat'         => $vat,
				'with_vat'    => $with_vat,
				'rounding'    => $rounding,
				'paid'        => $paid,
				'due'         => $due,
			),
		) + $in;
	}

	/**
	 * The breakdown of $category at $rate with $amount added to its base: a
	 * new one, of that base, when none is yet (the core's
	 * breakdown::VatBreakdown::join).
	 *
	 * @param array  $breakdown The breakdowns so far.
	 * @param string $category  VAT category.
	 * @param array  $rate      VAT rate.
	 * @param array  $amount    A line's net amount, a charge, an allowance (negative).
	 * @param int    $places    The currency's places.
	 * @return int Its index.
	 * @throws Counterfoil_Einvoice_Refusal BT-116 when the base does not fit.
	 */
	private static function join_breakdown( array &$breakdown, $category, array $rate, array $amount, $places ) {
		foreach ( $breakdown as $i => $b ) {
			if ( $b['category'] === $category && 0 === self::cmp( $b['rate'], $rate ) ) {
				$breakdown[ $i ]['base'] = self::fits( self::add( $b['base'], $amount ), 'BT-116', 'VAT category taxable amount' );
				return $i;
			}
		}
		$breakdown[] = array(
			'category'         => $category,
			'rate'             => $rate,
			'base'             => $amount,
			'tax'              => array( 0, 0 ),
			'exemption_code'   => null,
			'exemption_reason' => null,
			'lines'            => 0,
			'stating'          => 0,
			'stated'           => array( 0, $places ),
			'adjustments'      => 0,
		);
		return count( $breakdown ) - 1;
	}

	/**
	 * A document-level allowance or charge checked (the core's
	 * allowance::check, in its order): its amount (BR-31/BR-36) above zero
	 * with at most 2 decimals, rounded to the currency's places; a reason or
	 * a code (BR-33/BR-38), the code on UNCL5189 (BR-CL-19) or UNCL7161
	 * (BR-CL-20); its VAT category (BR-32/BR-37) with a rate that fits it
	 * (absent only for O) and the parties' VAT identifiers it asks.
	 *
	 * @param array $a      From read_allowance_charges().
	 * @param bool  $charge A charge (BG-21), else an allowance (BG-20).
	 * @param array $seller Seller.
	 * @param array $buyer  Buyer.
	 * @param int   $places The currency's places.
	 * @return array charge, amount, reason, reason_code, category, rate.
	 * @throws Counterfoil_Einvoice_Refusal Naming BT-92 … BT-98 or BT-99 … BT-105 (or a party's).
	 */
	private static function check_allowance_charge( array $a, $charge, array $seller, array $buyer, $places ) {
		list( $amount_term, $category_term, $rate_term, $reason_term, $code_term ) = $charge
			? array( 'BT-99', 'BT-102', 'BT-103', 'BT-104', 'BT-105' )
			: array( 'BT-92', 'BT-95', 'BT-96', 'BT-97', 'BT-98' );
		$what  = $charge ? 'charge' : 'allowance';
		$given = $a['amount'];
		if ( null === $given ) {
			throw new Counterfoil_Einvoice_Refusal( $amount_term, ( $charge ? 'BR-36' : 'BR-31' ) . ": each document level $what has an amount" );
		}
		if ( $given[1] > 2 ) {
			throw new Counterfoil_Einvoice_Refusal( $amount_term, self::str( $given ) . ' has more than the 2 decimals an amount has' );
		}
		$amount = self::fits( self::round( $given, $places ), $amount_term, "document level $what amount" );
		if ( $amount[0] <= 0 ) {
			throw new Counterfoil_Einvoice_Refusal( $amount_term, self::str( $given ) . " is not an amount above zero in the invoice's currency" );
		}
		$reason = self::text( $a['reason'] );
		$code   = self::text( $a['reason_code'] );
		if ( null === $reason && null === $code ) {
			throw new Counterfoil_Einvoice_Refusal( $reason_term, ( $charge ? 'BR-38 / BR-CO-22' : 'BR-33 / BR-CO-21' ) . ": each document level $what has a reason or a reason code" );
		}
		if ( null !== $code && ! in_array( $code, $charge ? self::CHARGE_REASONS : self::ALLOWANCE_REASONS, true ) ) {
			throw new Counterfoil_Einvoice_Refusal( $code_term, "`$code` is not on " . ( $charge ? 'UNCL7161 as BR-CL-20 lists it, such as FC (freight)' : 'UNCL5189 as BR-CL-19 lists it, such as 95 (discount)' ) );
		}
		$category = $a['vat_category'];
		if ( null === $category ) {
			throw new Counterfoil_Einvoice_Refusal( $category_term, ( $charge ? 'BR-37' : 'BR-32' ) . ": each document level $what has a VAT category code" );
		}
		$rate = $a['vat_rate'];
		if ( null === $rate ) {
			if ( 'O' !== $category ) {
				throw new Counterfoil_Einvoice_Refusal( $rate_term, "a $what states its VAT rate unless it is not subject to VAT (O)" );
			}
			$rate = array( 0, 0 );
		}
		$zero = 0 === $rate[0];
		if ( 'S' === $category ? ( $zero || $rate[0] < 0 ) : ! $zero ) {
			throw new Counterfoil_Einvoice_Refusal( $rate_term, "category $category takes " . ( 'S' === $category ? 'a rate above 0' : 'the rate 0' ) );
		}
		self::check_category_parties( $category, $seller, $buyer );
		return array(
			'charge'      => $charge,
			'amount'      => $amount,
			'reason'      => $reason,
			'reason_code' => $code,
			'category'    => $category,
			'rate'        => $rate,
		);
	}

	/**
	 * A category's VAT (the core's model::stated_tax): computed from its
	 * base, or the sum its lines state when each states one, within what
	 * rounding each line on its own can make the sum differ (at most
	 * max(1, ceil(n / 2)) minor units) and below one unit.
	 *
	 * @param array $b        A breakdown.
	 * @param array $computed Its VAT from its base.
	 * @param int   $places   The currency's places.
	 * @return array
	 * @throws Counterfoil_Einvoice_Refusal BT-117.
	 */
	private static function stated_tax( array $b, array $computed, $places ) {
		if ( 0 === $b['stating'] ) {
			return $computed;
		}
		if ( $b['adjustments'] > 0 ) {
			throw new Counterfoil_Einvoice_Refusal( 'BT-117', "the lines of category {$b['category']} at " . self::str( $b['rate'] ) . ' % state the VAT charged, and a document-level allowance or charge is in it too: state no line\'s VAT, or put no allowance or charge at that rate' );
		}
		if ( $b['stating'] !== $b['lines'] ) {
			throw new Counterfoil_Einvoice_Refusal( 'BT-117', "{$b['stating']} of the {$b['lines']} lines of category {$b['category']} at " . self::str( $b['rate'] ) . ' % state the VAT charged: all or none do' );
		}
		$allowed = max( 1, intdiv( $b['lines'] + 1, 2 ) );
		$diff    = self::fits( self::sub( $b['stated'], $computed ), 'BT-117', 'VAT category tax amount' );
		$abs     = PHP_INT_MIN === $diff[0] ? $diff : array( abs( $diff[0] ), $diff[1] );
		$over    = self::sub( $abs, array( $allowed, $places ) );
		$unit    = self::sub( $abs, array( 1, 0 ) );
		if ( null === $over || $over[0] > 0 || null === $unit || $unit[0] >= 0 ) {
			throw new Counterfoil_Einvoice_Refusal( 'BT-117', "the lines of category {$b['category']} at " . self::str( $b['rate'] ) . ' % state ' . self::str( $b['stated'] ) . ' of VAT, ' . self::str( $diff ) . ' from the ' . self::str( $computed ) . ' their base makes: more than rounding each line can explain' );
		}
		return $b['stated'];
	}

	/**
	 * A line's exemption code and reason (the core's vat::check_exemption):
	 * none on a taxed or zero-rated line (BR-S-10, BR-Z-10), a code on CEF's
	 * VATEX list (BR-CL-22) that names this category's exemption.
	 *
	 * @param array $l A line from read().
	 * @throws Counterfoil_Einvoice_Refusal BT-120 or BT-121.
	 */
	private static function check_exemption( array $l ) {
		$c    = $l['category'];
		$code = self::text( $l['vat_exemption_code'] );
		if ( ( 'S' === $c || 'Z' === $c ) && ( null !== $code || null !== self::text( $l['vat_exemption_reason'] ) ) ) {
			throw new Counterfoil_Einvoice_Refusal( 'BT-120', "BR-S-10 / BR-Z-10: a line of category $c is not exempt and states no exemption" );
		}
		if ( null !== $code ) {
			if ( ! in_array( $code, self::VATEX, true ) ) {
				throw new Counterfoil_Einvoice_Refusal( 'BT-121', "`$code` is not on CEF's VATEX list, such as VATEX-EU-132 (BR-CL-22)" );
			}
			$own = array_key_exists( $c, self::CATEGORY_CODES ) ? in_array( $code, self::CATEGORY_CODES[ $c ], true ) : ! in_array( $code, array_merge( ...array_values( self::CATEGORY_CODES ) ), true );
			if ( ! $own ) {
				throw new Counterfoil_Einvoice_Refusal( 'BT-121', "`$code` is not an exemption of category $c" );
			}
		}
	}

	/**
	 * A line's own terms (the core's details::check_line): a unit on
	 * BR-CL-23's list, a GTIN with its check digit, a VAT amount of at most
	 * 2 decimals.
	 *
	 * @param array $l A line from read().
	 * @throws Counterfoil_Einvoice_Refusal BT-130, BT-157 or BT-117.
	 */
	private static function check_line( array $l ) {
		$unit = self::text( $l['unit_code'] );
		if ( null !== $unit && ! in_array( $unit, self::UNIT_CODES, true ) ) {
			throw new Counterfoil_Einvoice_Refusal( 'BT-130', "`$unit` is not a UN/ECE Recommendation 20 or 21 code such as C62 or H87 (BR-CL-23)" );
		}
		$gtin = self::text( $l['gtin'] );
		if ( null !== $gtin && ! self::is_gtin( $gtin ) ) {
			throw new Counterfoil_Einvoice_Refusal( 'BT-157', "`$gtin` is not a GTIN (8, 12, 13 or 14 digits with GS1's check digit)" );
		}
		if ( null !== $l['vat_amount'] && $l['vat_amount'][1] > 2 ) {
			throw new Counterfoil_Einvoice_Refusal( 'BT-117', "a line's VAT " . self::str( $l['vat_amount'] ) . ' has more than 2 decimals' );
		}
	}

	/**
	 * Whether a GTIN (8, 12, 13 or 14 digits) has its check digit right
	 * (GS1's mod 10: weights 3 and 1 from the right, the check digit
	 * excluded; the core's codes::is_gtin).
	 *
	 * @param string $gtin Digits.
	 * @return bool
	 */
	public static function is_gtin( $gtin ) {
		if ( ! is_string( $gtin ) || ! preg_match( '/^[0-9]+\z/', $gtin ) || ! in_array( strlen( $gtin ), array( 8, 12, 13, 14 ), true ) ) {
			return false;
		}
		$body = strrev( substr( $gtin, 0, -1 ) );
		$sum  = 0;
		for ( $i = 0; $i < strlen( $body ); $i++ ) {
			$sum += (int) $body[ $i ] * ( 0 === $i % 2 ? 3 : 1 );
		}
		return ( 10 - $sum % 10 ) % 10 === (int) substr( $gtin, -1 );
	}

	/**
	 * The paid amount (BT-113) of a document payable $payable (the core's
	 * settlement::paid): all or nothing by `paid`, or the amount given,
	 * never more than the amount payable and never negative.
	 *
	 * @param array $in      From read().
	 * @param array $payable With VAT plus the rounding.
	 * @param int   $places  The currency's places.
	 * @return array
	 * @throws Counterfoil_Einvoice_Refusal BT-113.
	 */
	private static function paid( array $in, array $payable, $places ) {
		$p = $in['paid_amount'];
		if ( null === $p ) {
			return $in['paid'] ? $payable : array( 0, $places );
		}
		if ( $p[1] > 2 ) {
			throw new Counterfoil_Einvoice_Refusal( 'BT-113', self::str( $p ) . ' has more than 2 decimals' );
		}
		$p = self::fits( self::round( $p, $places ), 'BT-113', 'paid amount' );
		if ( $p[0] < 0 ) {
			throw new Counterfoil_Einvoice_Refusal( 'BT-113', self::str( $p ) . ' is negative' );
		}
		$over = self::sub( $p, $payable );
		if ( null === $over || $over[0] > 0 ) {
			throw new Counterfoil_Einvoice_Refusal( 'BT-113', self::str( $p ) . ' is more than the amount payable ' . self::str( $payable ) );
		}
		return $p;
	}

	/**
	 * The means of payment an input states (BG-16; the core's
	 * settlement::means): as given (the seller's account with a credit
	 * transfer on an invoice, the mandate with a direct debit), else a
	 * credit transfer to the seller's account on an invoice with an amount
	 * due; null when none.
	 *
	 * @param array $in  From read() (or document()).
	 * @param array $due The amount due.
	 * @return array|null code, account, mandate, remittance.
	 */
	private static function means( array $in, array $due ) {
		$remittance = self::text( $in['remittance_information'] );
		$code       = self::text( $in['payment_means'] );
		if ( null !== $code ) {
			return array(
				'code'       => $code,
				'account'    => ! $in['credit'] && in_array( $code, self::CREDIT_TRANSFER, true ) ? self::ptext( $in['seller'], 'iban' ) : null,
				'mandate'    => in_array( $code, self::DIRECT_DEBIT, true ) ? self::text( $in['mandate_reference'] ) : null,
				'remittance' => $remittance,
			);
		}
		$account = self::ptext( $in['seller'], 'iban' );
		if ( $in['credit'] || $due[0] <= 0 || null === $account ) {
			return null;
		}
		return array(
			'code'       => '30',
			'account'    => $account,
			'mandate'    => null,
			'remittance' => $remittance,
		);
	}

	/**
	 * The means given, once the amount due is known (the core's
	 * settlement::check).
	 *
	 * @param array $in  From read().
	 * @param array $due The amount due.
	 * @throws Counterfoil_Einvoice_Refusal BT-81, BT-84 or BT-89.
	 */
	private static function check_settlement( array $in, array $due ) {
		$code = self::text( $in['payment_means'] );
		if ( null !== $code ) {
			$transfer = in_array( $code, self::CREDIT_TRANSFER, true );
			if ( ! in_array( $code, self::PAYMENT_MEANS, true ) ) {
				throw new Counterfoil_Einvoice_Refusal( 'BT-81', "`$code` is not a UNCL4461 code such as 30, 48, 58 or 59 (BR-CL-16)" );
			}
			if ( $transfer && $in['credit'] ) {
				throw new Counterfoil_Einvoice_Refusal( 'BT-81', "a refund by credit transfer goes to the buyer's account, which BR-61 asks and the input does not hold: state the refund's means otherwise, or none" );
			}
			if ( $transfer && null === self::ptext( $in['seller'], 'iban' ) ) {
				throw new Counterfoil_Einvoice_Refusal( 'BT-84', 'BR-61: a credit transfer names the account to pay to' );
			}
			if ( in_array( $code, self::DIRECT_DEBIT, true ) && null === self::text( $in['mandate_reference'] ) ) {
				throw new Counterfoil_Einvoice_Refusal( 'BT-89', 'PEPPOL-EN16931-R061: a direct debit names its mandate' );
			}
		}
		if ( null !== self::text( $in['remittance_information'] ) && null === self::means( $in, $due ) ) {
			throw new Counterfoil_Einvoice_Refusal( 'BT-81', 'remittance information (BT-83) is stated with the means of payment (BG-16)' );
		}
	}

	/** Whether an invoicing period is stated (BG-14). */
	private static function has_period( array $in ) {
		return null !== self::text( $in['period_start'] ) || null !== self::text( $in['period_end'] );
	}

	/**
	 * The document's own terms (the core's details::check): dates, the
	 * period (BR-29), the deliver-to country (BR-57), notes and their
	 * subjects, the business process, the accounting currency and its VAT
	 * (BR-53, BR-CL-05, PEPPOL-EN16931-R005).
	 *
	 * @param array $in From read().
	 * @throws Counterfoil_Einvoice_Refusal Naming the business term.
	 */
	private static function check_details( array $in ) {
		foreach ( array(
			'supply_date'  => 'BT-72',
			'period_start' => 'BT-73',
			'period_end'   => 'BT-74',
		) as $key => $term ) {
			$d = self::text( $in[ $key ] );
			if ( null !== $d && ! self::is_date( $d ) ) {
				throw new Counterfoil_Einvoice_Refusal( $term, "`$d` is not a date YYYY-MM-DD" );
			}
		}
		$start = self::text( $in['period_start'] );
		$end   = self::text( $in['period_end'] );
		if ( null !== $start && null !== $end && strcmp( $end, $start ) < 0 ) {
			throw new Counterfoil_Einvoice_Refusal( 'BT-74', "BR-29: the period ends ($end) before it starts ($start)" );
		}
		if ( null !== $in['deliver_to'] ) {
			$country = $in['deliver_to']['country'];
			if ( '' === $country ) {
				throw new Counterfoil_Einvoice_Refusal( 'BT-80', 'BR-57: a deliver-to address names its country' );
			}
			if ( ! in_array( $country, self::COUNTRIES, true ) ) {
				throw new Counterfoil_Einvoice_Refusal( 'BT-80', "`$country` is not an ISO 3166-1 alpha-2 code (BR-CL-14)" );
			}
		}
		foreach ( $in['notes'] as $n ) {
			if ( self::blank( $n['text'] ) ) {
				throw new Counterfoil_Einvoice_Refusal( 'BT-22', 'a note has text' );
			}
		}
		foreach ( $in['notes'] as $n ) {
			$subject = self::text( $n['subject'] );
			if ( null !== $subject && ! preg_match( '/^[A-Z]{3}\z/', $subject ) ) {
				throw new Counterfoil_Einvoice_Refusal( 'BT-21', "`$subject` is not a UNCL4451 code of three capitals such as PMT" );
			}
		}
		$process = self::text( $in['business_process'] );
		// '#' or a control character (Unicode's Cc: U+0000-U+001F, U+007F-U+009F).
		if ( null !== $process && preg_match( '/[#\x00-\x1F\x7F]|\xC2[\x80-\x9F]/', $process ) ) {
			throw new Counterfoil_Einvoice_Refusal( 'BT-23', "`$process` is not an identifier" );
		}
		$c = self::text( $in['tax_currency'] );
		$v = $in['vat_in_tax_currency'];
		if ( null === $c && null !== $v ) {
			throw new Counterfoil_Einvoice_Refusal( 'BT-6', 'BR-53: the VAT in the accounting currency names that currency' );
		}
		if ( null !== $c && null === $v ) {
			throw new Counterfoil_Einvoice_Refusal( 'BT-111', 'BR-53: an accounting currency states the total VAT in it' );
		}
		if ( null !== $c ) {
			if ( ! in_array( $c, self::CURRENCIES, true ) ) {
				throw new Counterfoil_Einvoice_Refusal( 'BT-6', "`$c` is not an ISO 4217 currency code (BR-CL-05)" );
			}
			if ( strtoupper( trim( $in['currency'] ) ) === $c ) {
				throw new Counterfoil_Einvoice_Refusal( 'BT-6', 'PEPPOL-EN16931-R005: the accounting currency is stated only when it is not the invoice\'s' );
			}
			if ( $v[0] < 0 || $v[1] > 2 ) {
				throw new Counterfoil_Einvoice_Refusal( 'BT-111', self::str( $v ) . ' is not an amount of at most 2 decimals, not negative' );
			}
		}
	}

	private static function check_party( array $p, $seller ) {
		if ( self::blank( (string) self::opt( $p, 'name' ) ) ) {
			throw new Counterfoil_Einvoice_Refusal( $seller ? 'BT-27' : 'BT-44', 'both parties are named (BR-06 / BR-07)' );
		}
		$country = (string) self::opt( $p, 'country' );
		if ( ! in_array( $country, self::COUNTRIES, true ) ) {
			throw new Counterfoil_Einvoice_Refusal( $seller ? 'BT-40' : 'BT-55', '' === $country ? 'the country is missing' : "`$country` is not an ISO 3166-1 alpha-2 code such as BE or GB (BR-CL-14)" );
		}
		if ( ( null !== self::ptext( $p, 'electronic_address' ) ) !== ( null !== self::ptext( $p, 'electronic_address_scheme' ) ) ) {
			throw new Counterfoil_Einvoice_Refusal( $seller ? 'BT-34-1' : 'BT-49-1', 'an electronic address names its scheme (BR-62 / BR-63)' );
		}
		$icd = self::ptext( $p, 'legal_id_scheme' );
		if ( null !== $icd ) {
			if ( null === self::ptext( $p, 'legal_id' ) ) {
				throw new Counterfoil_Einvoice_Refusal( $seller ? 'BT-30' : 'BT-47', 'a scheme (BT-30-1 / BT-47-1) is given for an identifier that is not' );
			}
			if ( ! in_array( $icd, self::ICD, true ) ) {
				throw new Counterfoil_Einvoice_Refusal( $seller ? 'BT-30' : 'BT-47', "scheme `$icd` is not an ISO 6523 ICD code such as 0002 or 0106 (BR-CL-11)" );
			}
		}
		$vat = self::ptext( $p, 'vat_id' );
		if ( null !== $vat && 'EL' !== substr( $vat, 0, 2 ) && ! in_array( substr( $vat, 0, 2 ), self::COUNTRIES, true ) ) {
			throw new Counterfoil_Einvoice_Refusal( $seller ? 'BT-31' : 'BT-48', "BR-CO-09: `$vat` does not begin with its country's code (BE…, EL for Greece)" );
		}
		if ( $seller && null === $vat && null === self::ptext( $p, 'legal_id' ) ) {
			throw new Counterfoil_Einvoice_Refusal( 'BT-30', 'BR-CO-26: the seller is identified by a legal registration (BT-30) or a VAT identifier (BT-31)' );
		}
	}

	private static function check_category_parties( $c, array $seller, array $buyer ) {
		$seller_vat = null !== self::ptext( $seller, 'vat_id' );
		$seller_tax = $seller_vat || null !== self::ptext( $seller, 'tax_registration_id' );
		$buyer_vat  = null !== self::ptext( $buyer, 'vat_id' );
		if ( in_array( $c, array( 'S', 'Z', 'E' ), true ) && ! $seller_tax ) {
			throw new Counterfoil_Einvoice_Refusal( 'BT-31', 'BR-S-02 / BR-Z-02 / BR-E-02: the supply names the seller\'s VAT identifier (BT-31) or tax registration (BT-32)' );
		}
		if ( in_array( $c, array( 'G', 'AE', 'K' ), true ) && ! $seller_vat ) {
			throw new Counterfoil_Einvoice_Refusal( 'BT-31', 'the supply names the seller\'s VAT identifier' );
		}
		if ( in_array( $c, array( 'AE', 'K' ), true ) && ! $buyer_vat ) {
			throw new Counterfoil_Einvoice_Refusal( 'BT-48', 'reverse charge and intra-community supply name the buyer\'s VAT identifier' );
		}
		if ( 'O' === $c && ( $seller_tax || $buyer_vat ) ) {
			throw new Counterfoil_Einvoice_Refusal( 'BT-31', 'a supply not subject to VAT names no VAT identifier of either party (BR-O-02 / BR-O-03)' );
		}
	}

	/**
	 * Whether a party has a Peppol participant id: an electronic address
	 * under a scheme on Peppol's list (an e-mail, EM, is not).
	 *
	 * @param array $p Party.
	 * @return bool
	 */
	public static function is_peppol_participant( array $p ) {
		return null !== self::ptext( $p, 'electronic_address' ) && in_array( self::ptext( $p, 'electronic_address_scheme' ), self::PEPPOL_EAS, true );
	}

	/**
	 * Whether a UBL document claims Peppol BIS Billing 3.0: no business
	 * process of its own (BT-23), both parties Peppol participants
	 * (PEPPOL-EN16931-R010, R020, CL008) and a buyer reference or an order
	 * reference (R003); else it is plain EN 16931 (the core's
	 * `peppol::claims_peppol`).
	 *
	 * @param array $doc From document().
	 * @return bool
	 */
	public static function claims_peppol( array $doc ) {
		return null === self::ptext( $doc, 'business_process' )
			&& 'GR' !== ( isset( $doc['seller']['country'] ) ? $doc['seller']['country'] : null )
			&& self::is_peppol_participant( isset( $doc['seller'] ) && is_array( $doc['seller'] ) ? $doc['seller'] : array() )
			&& self::is_peppol_participant( isset( $doc['buyer'] ) && is_array( $doc['buyer'] ) ? $doc['buyer'] : array() )
			&& ( null !== self::ptext( $doc, 'buyer_reference' ) || null !== self::ptext( $doc, 'order_reference' ) );
	}

	/**
	 * The national rules Peppol runs for the seller's country, on a
	 * document that claims Peppol (the core's peppol::check_national): the
	 * Netherlands' (NL-R-002 … NL-R-008) and Denmark's between two Danish
	 * parties (DK-R-005, DK-R-014).
	 *
	 * @param array $in  From read().
	 * @param array $due The amount due.
	 * @throws Counterfoil_Einvoice_Refusal Naming the term.
	 */
	private static function check_national( array $in, array $due ) {
		if ( ! self::claims_peppol( $in ) ) {
			return;
		}
		$seller  = $in['seller'];
		$buyer   = $in['buyer'];
		$means   = self::means( $in, $due );
		$code    = null === $means ? null : $means['code'];
		$address = function ( array $p ) {
			return null !== self::ptext( $p, 'street' ) && null !== self::ptext( $p, 'city' ) && null !== self::ptext( $p, 'postcode' );
		};
		$scheme_is = function ( array $p, array $schemes ) {
			return null === self::ptext( $p, 'legal_id' ) || in_array( self::ptext( $p, 'legal_id_scheme' ), $schemes, true );
		};
		$seller_country = self::opt( $seller, 'country' );
		$buyer_country  = self::opt( $buyer, 'country' );
		if ( 'NL' === $seller_country ) {
			if ( ! $address( $seller ) ) {
				throw new Counterfoil_Einvoice_Refusal( 'BT-35', 'NL-R-002: a Dutch seller\'s address names street, city and post code' );
			}
			if ( ! $scheme_is( $seller, array( '0106', '0190' ) ) ) {
				throw new Counterfoil_Einvoice_Refusal( 'BT-30', 'NL-R-003: a Dutch seller\'s legal identifier is a KvK (scheme 0106) or OIN (0190) number' );
			}
			if ( 'NL' === $buyer_country && ! $address( $buyer ) ) {
				throw new Counterfoil_Einvoice_Refusal( 'BT-50', 'NL-R-004: a Dutch buyer\'s address names street, city and post code' );
			}
			if ( 'NL' === $buyer_country && ! $scheme_is( $buyer, array( '0106', '0190' ) ) ) {
				throw new Counterfoil_Einvoice_Refusal( 'BT-47', 'NL-R-005: a Dutch buyer\'s legal identifier is a KvK (scheme 0106) or OIN (0190) number' );
			}
			if ( ! $in['credit'] && $due[0] > 0 && null === $code ) {
				throw new Counterfoil_Einvoice_Refusal( 'BT-81', 'NL-R-007: a Dutch seller\'s invoice with an amount due states its payment means' );
			}
			if ( 'NL' === $buyer_country && null !== $code && ! in_array( $code, self::NL_MEANS, true ) ) {
				throw new Counterfoil_Einvoice_Refusal( 'BT-81', "NL-R-008: a Dutch invoice's means are 30, 48, 49, 57, 58 or 59, not $code" );
			}
		}
		if ( 'DK' === $seller_country ) {
			if ( null === self::ptext( $seller, 'legal_id' ) ) {
				throw new Counterfoil_Einvoice_Refusal( 'BT-30', 'DK-R-002: a Danish seller states its CVR number' );
			}
			if ( ! $scheme_is( $seller, array( '0184' ) ) ) {
				throw new Counterfoil_Einvoice_Refusal( 'BT-30', 'DK-R-014: a Danish seller\'s legal identifier is its CVR number (scheme 0184)' );
			}
		}
		if ( 'DK' === $seller_country && 'DK' === $buyer_country ) {
			if ( null !== $code && ! in_array( $code, self::DK_MEANS, true ) ) {
				throw new Counterfoil_Einvoice_Refusal( 'BT-81', "DK-R-005: between Danish parties the means are 1, 10, 31, 42, 48, 49, 50, 58, 59, 93 or 97, not $code (a SEPA transfer is 58)" );
			}
		}
		if ( 'IT' === $seller_country ) {
			$tax = self::ptext( $seller, 'tax_registration_id' );
			if ( null !== $tax && ! preg_match( '/^[A-Z0-9]{11,16}\z/', $tax ) ) {
				throw new Counterfoil_Einvoice_Refusal( 'BT-32', 'IT-R-001: an Italian seller\'s tax registration is 11 to 16 capitals and digits' );
			}
			foreach ( array( 'street' => 'BT-35', 'city' => 'BT-37', 'postcode' => 'BT-38' ) as $field => $term ) {
				if ( null === self::ptext( $seller, $field ) ) {
					throw new Counterfoil_Einvoice_Refusal( $term, 'IT-R-002 … IT-R-004: an Italian seller\'s address names street, city and post code' );
				}
			}
		}
		if ( 'SE' === $seller_country ) {
			self::check_sweden( $in );
		}
		if ( 'NO' === $seller_country ) {
			$vat = self::ptext( $seller, 'vat_id' );
			if ( null !== $vat && 0 === strpos( $vat, 'NO' ) && ! self::is_norwegian_vat( $vat ) ) {
				throw new Counterfoil_Einvoice_Refusal( 'BT-31', "NO-R-001: a Norwegian VAT identifier is NO, an organisation number of nine digits with its check digit, then MVA; not $vat" );
			}
		}
	}

	/**
	 * Sweden's rules (SE-R-001 … SE-R-006, SE-R-013), as the core's peppol::check_sweden.
	 *
	 * @param array $in The checked input.
	 * @throws Counterfoil_Einvoice_Refusal When one fails.
	 */
	private static function check_sweden( array $in ) {
		$seller = $in['seller'];
		$vat    = self::ptext( $seller, 'vat_id' );
		$vat    = null !== $vat && 0 === strpos( $vat, 'SE' ) ? $vat : null;
		if ( null !== $vat && ( 14 !== strlen( $vat ) || ! ctype_digit( substr( $vat, 2 ) ) ) ) {
			throw new Counterfoil_Einvoice_Refusal( 'BT-31', "SE-R-001 / SE-R-002: a Swedish VAT identifier is SE and twelve digits; not $vat" );
		}
		$legal = self::ptext( $seller, 'legal_id' );
		if ( null !== $legal ) {
			if ( ! self::is_swedish_orgnr( $legal ) ) {
				throw new Counterfoil_Einvoice_Refusal( 'BT-30', "SE-R-003 / SE-R-004 / SE-R-013: a Swedish organisation number is ten digits, the last by Luhn's check; not $legal" );
			}
			$tax = self::ptext( $seller, 'tax_registration_id' );
			if ( null !== $tax && 'GODKÄND FÖR F-SKATT' !== mb_strtoupper( trim( $tax ), 'UTF-8' ) ) {
				throw new Counterfoil_Einvoice_Refusal( 'BT-32', 'SE-R-005: a Swedish seller\'s tax registration states "Godkänd för F-skatt"' );
			}
		}
		if ( null !== $vat ) {
			foreach ( $in['lines'] as $l ) {
				if ( 'S' === $l['category'] && 0 !== self::cmp( $l['rate'], array( 6, 0 ) ) && 0 !== self::cmp( $l['rate'], array( 12, 0 ) ) && 0 !== self::cmp( $l['rate'], array( 25, 0 ) ) ) {
					throw new Counterfoil_Einvoice_Refusal( 'BT-152', 'SE-R-006: a Swedish seller\'s standard rates are 6, 12 and 25 %, not ' . self::str( $l['rate'] ) );
				}
			}
		}
	}

	/**
	 * A Swedish organisation number: ten digits, the last Luhn's check digit.
	 *
	 * @param string $n The number.
	 * @return bool
	 */
	private static function is_swedish_orgnr( $n ) {
		if ( ! preg_match( '/^[0-9]{10}\z/', $n ) ) {
			return false;
		}
		$sum = 0;
		for ( $i = 0; $i < 9; $i++ ) {
			$v    = (int) $n[ $i ] * ( 0 === $i % 2 ? 2 : 1 );
			$sum += intdiv( $v, 10 ) + $v % 10;
		}
		return ( 10 - $sum % 10 ) % 10 === (int) $n[9];
	}

	/**
	 * A Norwegian VAT identifier: NO, nine digits whose last is the mod-11
	 * check digit (weights 3 2 7 6 5 4 3 2), then MVA.
	 *
	 * @param string $v The identifier.
	 * @return bool
	 */
	private static function is_norwegian_vat( $v ) {
		if ( ! preg_match( '/^NO([0-9]{9})MVA\z/', $v, $m ) ) {
			return false;
		}
		$sum = 0;
		foreach ( array( 3, 2, 7, 6, 5, 4, 3, 2 ) as $i => $w ) {
			$sum += $w * (int) $m[1][ $i ];
		}
		$c = 11 - $sum % 11;
		return 10 !== $c && ( 11 === $c ? 0 : $c ) === (int) $m[1][8];
	}

	private static function money( array $doc, $d ) {
		return self::str( self::round( $d, $doc['places'] ) );
	}

	/**
	 * The document's delivery as written (the core's delivery::of): the
	 * supply date and the deliver-to address given; an intra-community
	 * supply (K) falls back to the issue date (when no period is given) and
	 * the buyer's country; null when nothing is known.
	 *
	 * @param array $doc From document().
	 * @return array|null date (string|null), address (array|null).
	 */
	private static function delivery( array $doc ) {
		$k = false;
		foreach ( $doc['breakdown'] as $b ) {
			$k = $k || 'K' === $b['category'];
		}
		$date = self::text( $doc['supply_date'] );
		if ( null === $date && $k && ! self::has_period( $doc ) ) {
			$date = $doc['issue_date'];
		}
		$address = $doc['deliver_to'];
		if ( null === $address && $k ) {
			$address = array(
				'name'     => null,
				'street'   => null,
				'city'     => null,
				'postcode' => null,
				'country'  => (string) self::opt( $doc['buyer'], 'country' ),
			);
		}
		return null === $date && null === $address ? null : array(
			'date'    => $date,
			'address' => $address,
		);
	}

	/**
	 * The document as UBL 2.1 (Peppol BIS Billing 3.0 when claims_peppol(),
	 * else plain EN 16931).
	 *
	 * @param array $doc From document().
	 * @return string
	 */
	public static function ubl( array $doc ) {
		$credit = $doc['credit'];
		$cur    = array( 'currencyID' => $doc['currency'] );
		$w      = new Counterfoil_Xml_Writer();
		$w->open(
			$credit ? 'CreditNote' : 'Invoice',
			array(
				'xmlns'     => $credit ? 'urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2' : 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2',
				'xmlns:cac' => 'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2',
				'xmlns:cbc' => 'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2',
			)
		);
		if ( self::claims_peppol( $doc ) ) {
			$w->leaf( 'cbc:CustomizationID', self::CUSTOMIZATION_ID );
			$w->leaf( 'cbc:ProfileID', self::PROFILE_ID );
		} else {
			$w->leaf( 'cbc:CustomizationID', self::GUIDELINE_ID );
			$w->leaf_opt( 'cbc:ProfileID', $doc['business_process'] );
		}
		$w->leaf( 'cbc:ID', $doc['number'] );
		$w->leaf( 'cbc:IssueDate', $doc['issue_date'] );
		$w->leaf_opt( 'cbc:DueDate', $doc['due_date'] );
		$w->leaf( $credit ? 'cbc:CreditNoteTypeCode' : 'cbc:InvoiceTypeCode', $credit ? '381' : '380' );
		if ( $doc['paid_in_full'] ) {
			$w->leaf( 'cbc:Note', 'Paid' );
		}
		foreach ( $doc['notes'] as $n ) {
			$subject = self::text( $n['subject'] );
			$w->leaf( 'cbc:Note', null === $subject ? $n['text'] : '#' . $subject . '#' . $n['text'] );
		}
		$w->leaf( 'cbc:DocumentCurrencyCode', $doc['currency'] );
		$w->leaf_opt( 'cbc:TaxCurrencyCode', $doc['tax_currency'] );
		$w->leaf_opt( 'cbc:BuyerReference', $doc['buyer_reference'] );
		if ( self::has_period( $doc ) ) {
			$w->open( 'cac:InvoicePeriod' );
			$w->leaf_opt( 'cbc:StartDate', $doc['period_start'] );
			$w->leaf_opt( 'cbc:EndDate', $doc['period_end'] );
			$w->close();
		}
		$sales_order = self::text( $doc['sales_order_reference'] );
		$order       = self::text( $doc['order_reference'] );
		if ( null !== $order || null !== $sales_order ) {
			$w->open( 'cac:OrderReference' );
			$w->leaf( 'cbc:ID', null === $order ? 'NA' : $order );
			$w->leaf_opt( 'cbc:SalesOrderID', $sales_order );
			$w->close();
		}
		if ( $credit ) {
			$w->open( 'cac:BillingReference' )->open( 'cac:InvoiceDocumentReference' );
			$w->leaf( 'cbc:ID', $doc['preceding'] );
			$w->leaf_opt( 'cbc:IssueDate', $doc['preceding_date'] );
			$w->close()->close();
		}
		self::ubl_party( $w, 'cac:AccountingSupplierParty', $doc['seller'] );
		self::ubl_party( $w, 'cac:AccountingCustomerParty', $doc['buyer'] );
		$delivery = self::delivery( $doc );
		if ( null !== $delivery ) {
			$a = $delivery['address'];
			$w->open( 'cac:Delivery' );
			$w->leaf_opt( 'cbc:ActualDeliveryDate', $delivery['date'] );
			if ( null !== $a ) {
				$w->open( 'cac:DeliveryLocation' )->open( 'cac:Address' );
				$w->leaf_opt( 'cbc:StreetName', $a['street'] );
				$w->leaf_opt( 'cbc:CityName', $a['city'] );
				$w->leaf_opt( 'cbc:PostalZone', $a['postcode'] );
				$w->open( 'cac:Country' );
				$w->leaf( 'cbc:IdentificationCode', $a['country'] );
				$w->close()->close()->close();
				if ( null !== self::text( $a['name'] ) ) {
					$w->open( 'cac:DeliveryParty' )->open( 'cac:PartyName' );
					$w->leaf( 'cbc:Name', $a['name'] );
					$w->close()->close();
				}
			}
			$w->close();
		}
		$m = $doc['means'];
		if ( null !== $m ) {
			$w->open( 'cac:PaymentMeans' );
			$w->leaf( 'cbc:PaymentMeansCode', $m['code'] );
			$w->leaf_opt( 'cbc:PaymentID', $m['remittance'] );
			if ( null !== $m['account'] ) {
				$w->open( 'cac:PayeeFinancialAccount' );
				$w->leaf( 'cbc:ID', $m['account'] );
				$w->close();
			}
			if ( null !== $m['mandate'] ) {
				$w->open( 'cac:PaymentMandate' );
				$w->leaf( 'cbc:ID', $m['mandate'] );
				$w->close();
			}
			$w->close();
		}
		if ( null !== $doc['payment_terms'] ) {
			$w->open( 'cac:PaymentTerms' );
			$w->leaf( 'cbc:Note', $doc['payment_terms'] );
			$w->close();
		}
		foreach ( $doc['allowance_charges'] as $a ) {
			$w->open( 'cac:AllowanceCharge' );
			$w->leaf( 'cbc:ChargeIndicator', $a['charge'] ? 'true' : 'false' );
			$w->leaf_opt( 'cbc:AllowanceChargeReasonCode', $a['reason_code'] );
			$w->leaf_opt( 'cbc:AllowanceChargeReason', $a['reason'] );
			$w->leaf( 'cbc:Amount', self::money( $doc, $a['amount'] ), $cur );
			self::ubl_tax_category( $w, 'cac:TaxCategory', $a['category'], self::trimmed( $a['rate'] ), null );
			$w->close();
		}
		list( $has_allowances, $has_charges ) = self::has_allowance_charges( $doc );
		$w->open( 'cac:TaxTotal' );
		$w->leaf( 'cbc:TaxAmount', self::money( $doc, $doc['totals']['vat'] ), $cur );
		foreach ( $doc['breakdown'] as $b ) {
			$w->open( 'cac:TaxSubtotal' );
			$w->leaf( 'cbc:TaxableAmount', self::money( $doc, $b['base'] ), $cur );
			$w->leaf( 'cbc:TaxAmount', self::money( $doc, $b['tax'] ), $cur );
			self::ubl_tax_category( $w, 'cac:TaxCategory', $b['category'], self::trimmed( $b['rate'] ), $b );
			$w->close();
		}
		$w->close();
		$accounting = self::accounting_vat( $doc );
		if ( null !== $accounting ) {
			$w->open( 'cac:TaxTotal' );
			$w->leaf( 'cbc:TaxAmount', $accounting[1], array( 'currencyID' => $accounting[0] ) );
			$w->close();
		}
		$w->open( 'cac:LegalMonetaryTotal' );
		$w->leaf( 'cbc:LineExtensionAmount', self::money( $doc, $doc['totals']['lines'] ), $cur );
		$w->leaf( 'cbc:TaxExclusiveAmount', self::money( $doc, $doc['totals']['without_vat'] ), $cur );
		$w->leaf( 'cbc:TaxInclusiveAmount', self::money( $doc, $doc['totals']['with_vat'] ), $cur );
		if ( $has_allowances ) {
			$w->leaf( 'cbc:AllowanceTotalAmount', self::money( $doc, $doc['totals']['allowances'] ), $cur );
		}
		if ( $has_charges ) {
			$w->leaf( 'cbc:ChargeTotalAmount', self::money( $doc, $doc['totals']['charges'] ), $cur );
		}
		$w->leaf( 'cbc:PrepaidAmount', self::money( $doc, $doc['totals']['paid'] ), $cur );
		if ( null !== $doc['totals']['rounding'] ) {
			$w->leaf( 'cbc:PayableRoundingAmount', self::money( $doc, $doc['totals']['rounding'] ), $cur );
		}
		$w->leaf( 'cbc:PayableAmount', self::money( $doc, $doc['totals']['due'] ), $cur );
		$w->close();
		foreach ( $doc['lines'] as $i => $l ) {
			$w->open( $credit ? 'cac:CreditNoteLine' : 'cac:InvoiceLine' );
			$w->leaf( 'cbc:ID', (string) ( $i + 1 ) );
			$w->leaf( $credit ? 'cbc:CreditedQuantity' : 'cbc:InvoicedQuantity', self::trimmed( $l['quantity'] ), array( 'unitCode' => self::unit_code( $l ) ) );
			$w->leaf( 'cbc:LineExtensionAmount', self::money( $doc, $l['net'] ), $cur );
			$w->open( 'cac:Item' );
			$w->leaf( 'cbc:Name', $l['name'] );
			$sku = self::text( $l['seller_item_id'] );
			if ( null !== $sku ) {
				$w->open( 'cac:SellersItemIdentification' );
				$w->leaf( 'cbc:ID', $sku );
				$w->close();
			}
			$gtin = self::text( $l['gtin'] );
			if ( null !== $gtin ) {
				$w->open( 'cac:StandardItemIdentification' );
				$w->leaf( 'cbc:ID', $gtin, array( 'schemeID' => '0160' ) );
				$w->close();
			}
			self::ubl_tax_category( $w, 'cac:ClassifiedTaxCategory', $l['category'], self::trimmed( $l['rate'] ), null );
			$w->close();
			$w->open( 'cac:Price' );
			$w->leaf( 'cbc:PriceAmount', self::trimmed( $l['price'] ), $cur );
			$w->close();
			$w->close();
		}
		return $w->finish();
	}

	/**
	 * Whether the document has allowances, and whether it has charges: their
	 * totals (BT-107, BT-108) are written only then.
	 *
	 * @param array $doc From document().
	 * @return array Two booleans.
	 */
	private static function has_allowance_charges( array $doc ) {
		$has = array( false, false );
		foreach ( $doc['allowance_charges'] as $a ) {
			$has[ $a['charge'] ? 1 : 0 ] = true;
		}
		return $has;
	}

	/** A line's unit of measure (BT-130): as given, else C62 (one). */
	private static function unit_code( array $l ) {
		$unit = self::text( $l['unit_code'] );
		return null === $unit ? 'C62' : $unit;
	}

	/**
	 * The total VAT in the accounting currency (BT-6, BT-111) as written:
	 * [currency, amount with that currency's places], or null.
	 *
	 * @param array $doc From document().
	 * @return array|null
	 */
	private static function accounting_vat( array $doc ) {
		$c = self::text( $doc['tax_currency'] );
		$v = $doc['vat_in_tax_currency'];
		if ( null === $c || null === $v ) {
			return null;
		}
		$rounded = self::round( $v, self::places( $c ) );
		return array( $c, self::str( null === $rounded ? $v : $rounded ) );
	}

	/**
	 * A tax category; a breakdown's (not a line's) with its exemption code
	 * and reason.
	 *
	 * @param Counterfoil_Xml_Writer $w         Writer.
	 * @param string                 $element   Element.
	 * @param string                 $c         Category.
	 * @param string                 $rate      Rate as written.
	 * @param array|null             $breakdown The breakdown, or null for a line.
	 */
	private static function ubl_tax_category( Counterfoil_Xml_Writer $w, $element, $c, $rate, $breakdown ) {
		$w->open( $element );
		$w->leaf( 'cbc:ID', $c );
		if ( 'O' !== $c ) {
			$w->leaf( 'cbc:Percent', $rate );
		}
		if ( null !== $breakdown ) {
			$w->leaf_opt( 'cbc:TaxExemptionReasonCode', $breakdown['exemption_code'] );
			$w->leaf_opt( 'cbc:TaxExemptionReason', $breakdown['exemption_reason'] );
		}
		$w->open( 'cac:TaxScheme' );
		$w->leaf( 'cbc:ID', 'VAT' );
		$w->close()->close();
	}

	private static function ubl_party( Counterfoil_Xml_Writer $w, $role, array $p ) {
		$w->open( $role )->open( 'cac:Party' );
		$address = self::ptext( $p, 'electronic_address' );
		$scheme  = self::ptext( $p, 'electronic_address_scheme' );
		if ( null !== $address && null !== $scheme ) {
			$w->leaf( 'cbc:EndpointID', $address, array( 'schemeID' => $scheme ) );
		}
		$w->open( 'cac:PostalAddress' );
		$w->leaf_opt( 'cbc:StreetName', self::opt( $p, 'street' ) );
		$w->leaf_opt( 'cbc:CityName', self::opt( $p, 'city' ) );
		$w->leaf_opt( 'cbc:PostalZone', self::opt( $p, 'postcode' ) );
		$w->open( 'cac:Country' );
		$w->leaf( 'cbc:IdentificationCode', (string) self::opt( $p, 'country' ) );
		$w->close()->close();
		foreach ( array(
			'vat_id'              => 'VAT',
			'tax_registration_id' => 'TAX',
		) as $key => $scheme_id ) {
			$id = self::ptext( $p, $key );
			if ( null !== $id ) {
				$w->open( 'cac:PartyTaxScheme' );
				$w->leaf( 'cbc:CompanyID', $id );
				$w->open( 'cac:TaxScheme' );
				$w->leaf( 'cbc:ID', $scheme_id );
				$w->close()->close();
			}
		}
		$w->open( 'cac:PartyLegalEntity' );
		$w->leaf( 'cbc:RegistrationName', (string) self::opt( $p, 'name' ) );
		$legal = self::ptext( $p, 'legal_id' );
		if ( null !== $legal ) {
			$legal_scheme = self::ptext( $p, 'legal_id_scheme' );
			$w->leaf( 'cbc:CompanyID', $legal, null === $legal_scheme ? array() : array( 'schemeID' => $legal_scheme ) );
		}
		$w->close();
		if ( null !== self::ptext( $p, 'email' ) ) {
			$w->open( 'cac:Contact' );
			$w->leaf_opt( 'cbc:ElectronicMail', self::opt( $p, 'email' ) );
			$w->close();
		}
		$w->close()->close();
	}

	/**
	 * The document as UN/CEFACT CII (EN 16931 profile).
	 *
	 * @param array $doc From document().
	 * @return string
	 */
	public static function cii( array $doc ) {
		$date102 = function ( $iso ) {
			return str_replace( '-', '', $iso );
		};
		$w       = new Counterfoil_Xml_Writer();
		$w->open(
			'rsm:CrossIndustryInvoice',
			array(
				'xmlns:rsm' => 'urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100',
				'xmlns:qdt' => 'urn:un:unece:uncefact:data:standard:QualifiedDataType:100',
				'xmlns:ram' => 'urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100',
				'xmlns:udt' => 'urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100',
			)
		);
		$w->open( 'rsm:ExchangedDocumentContext' );
		$process = self::text( $doc['business_process'] );
		if ( null !== $process ) {
			$w->open( 'ram:BusinessProcessSpecifiedDocumentContextParameter' );
			$w->leaf( 'ram:ID', $process );
			$w->close();
		}
		$w->open( 'ram:GuidelineSpecifiedDocumentContextParameter' );
		$w->leaf( 'ram:ID', self::GUIDELINE_ID );
		$w->close()->close();
		$w->open( 'rsm:ExchangedDocument' );
		$w->leaf( 'ram:ID', $doc['number'] );
		$w->leaf( 'ram:TypeCode', $doc['credit'] ? '381' : '380' );
		$w->open( 'ram:IssueDateTime' );
		$w->leaf( 'udt:DateTimeString', $date102( $doc['issue_date'] ), array( 'format' => '102' ) );
		$w->close();
		if ( $doc['paid_in_full'] ) {
			$w->open( 'ram:IncludedNote' );
			$w->leaf( 'ram:Content', 'Paid' );
			$w->close();
		}
		foreach ( $doc['notes'] as $n ) {
			$w->open( 'ram:IncludedNote' );
			$w->leaf( 'ram:Content', $n['text'] );
			$w->leaf_opt( 'ram:SubjectCode', $n['subject'] );
			$w->close();
		}
		$w->close();
		$w->open( 'rsm:SupplyChainTradeTransaction' );
		foreach ( $doc['lines'] as $i => $l ) {
			$w->open( 'ram:IncludedSupplyChainTradeLineItem' );
			$w->open( 'ram:AssociatedDocumentLineDocument' );
			$w->leaf( 'ram:LineID', (string) ( $i + 1 ) );
			$w->close();
			$w->open( 'ram:SpecifiedTradeProduct' );
			$gtin = self::text( $l['gtin'] );
			if ( null !== $gtin ) {
				$w->leaf( 'ram:GlobalID', $gtin, array( 'schemeID' => '0160' ) );
			}
			$w->leaf_opt( 'ram:SellerAssignedID', $l['seller_item_id'] );
			$w->leaf( 'ram:Name', $l['name'] );
			$w->close();
			$w->open( 'ram:SpecifiedLineTradeAgreement' )->open( 'ram:NetPriceProductTradePrice' );
			$w->leaf( 'ram:ChargeAmount', self::trimmed( $l['price'] ) );
			$w->close()->close();
			$w->open( 'ram:SpecifiedLineTradeDelivery' );
			$w->leaf( 'ram:BilledQuantity', self::trimmed( $l['quantity'] ), array( 'unitCode' => self::unit_code( $l ) ) );
			$w->close();
			$w->open( 'ram:SpecifiedLineTradeSettlement' );
			$w->open( 'ram:ApplicableTradeTax' );
			$w->leaf( 'ram:TypeCode', 'VAT' );
			$w->leaf( 'ram:CategoryCode', $l['category'] );
			if ( 'O' !== $l['category'] ) {
				$w->leaf( 'ram:RateApplicablePercent', self::trimmed( $l['rate'] ) );
			}
			$w->close();
			$w->open( 'ram:SpecifiedTradeSettlementLineMonetarySummation' );
			$w->leaf( 'ram:LineTotalAmount', self::money( $doc, $l['net'] ) );
			$w->close()->close()->close();
		}
		$w->open( 'ram:ApplicableHeaderTradeAgreement' );
		$w->leaf_opt( 'ram:BuyerReference', $doc['buyer_reference'] );
		self::cii_party( $w, 'ram:SellerTradeParty', $doc['seller'] );
		self::cii_party( $w, 'ram:BuyerTradeParty', $doc['buyer'] );
		foreach ( array(
			'sales_order_reference' => 'ram:SellerOrderReferencedDocument',
			'order_reference'       => 'ram:BuyerOrderReferencedDocument',
		) as $key => $element ) {
			$order = self::text( $doc[ $key ] );
			if ( null !== $order ) {
				$w->open( $element );
				$w->leaf( 'ram:IssuerAssignedID', $order );
				$w->close();
			}
		}
		$w->close();
		$w->open( 'ram:ApplicableHeaderTradeDelivery' );
		$delivery = self::delivery( $doc );
		if ( null !== $delivery ) {
			$a = $delivery['address'];
			if ( null !== $a ) {
				$w->open( 'ram:ShipToTradeParty' );
				$w->leaf_opt( 'ram:Name', $a['name'] );
				$w->open( 'ram:PostalTradeAddress' );
				$w->leaf_opt( 'ram:PostcodeCode', $a['postcode'] );
				$w->leaf_opt( 'ram:LineOne', $a['street'] );
				$w->leaf_opt( 'ram:CityName', $a['city'] );
				$w->leaf( 'ram:CountryID', $a['country'] );
				$w->close()->close();
			}
			if ( null !== $delivery['date'] ) {
				$w->open( 'ram:ActualDeliverySupplyChainEvent' )->open( 'ram:OccurrenceDateTime' );
				$w->leaf( 'udt:DateTimeString', $date102( $delivery['date'] ), array( 'format' => '102' ) );
				$w->close()->close();
			}
		}
		$w->close();
		$w->open( 'ram:ApplicableHeaderTradeSettlement' );
		$m = $doc['means'];
		$w->leaf_opt( 'ram:PaymentReference', null === $m ? null : $m['remittance'] );
		$w->leaf_opt( 'ram:TaxCurrencyCode', $doc['tax_currency'] );
		$w->leaf( 'ram:InvoiceCurrencyCode', $doc['currency'] );
		if ( null !== $m ) {
			$w->open( 'ram:SpecifiedTradeSettlementPaymentMeans' );
			$w->leaf( 'ram:TypeCode', $m['code'] );
			if ( null !== $m['account'] ) {
				$w->open( 'ram:PayeePartyCreditorFinancialAccount' );
				$w->leaf( 'ram:IBANID', $m['account'] );
				$w->close();
			}
			$w->close();
		}
		foreach ( $doc['breakdown'] as $b ) {
			$w->open( 'ram:ApplicableTradeTax' );
			$w->leaf( 'ram:CalculatedAmount', self::money( $doc, $b['tax'] ) );
			$w->leaf( 'ram:TypeCode', 'VAT' );
			$w->leaf_opt( 'ram:ExemptionReason', $b['exemption_reason'] );
			$w->leaf( 'ram:BasisAmount', self::money( $doc, $b['base'] ) );
			$w->leaf( 'ram:CategoryCode', $b['category'] );
			$w->leaf_opt( 'ram:ExemptionReasonCode', $b['exemption_code'] );
			if ( 'O' !== $b['category'] ) {
				$w->leaf( 'ram:RateApplicablePercent', self::trimmed( $b['rate'] ) );
			}
			$w->close();
		}
		if ( self::has_period( $doc ) ) {
			$w->open( 'ram:BillingSpecifiedPeriod' );
			foreach ( array(
				'ram:StartDateTime' => 'period_start',
				'ram:EndDateTime'   => 'period_end',
			) as $element => $key ) {
				$date = self::text( $doc[ $key ] );
				if ( null !== $date ) {
					$w->open( $element );
					$w->leaf( 'udt:DateTimeString', $date102( $date ), array( 'format' => '102' ) );
					$w->close();
				}
			}
			$w->close();
		}
		foreach ( $doc['allowance_charges'] as $a ) {
			$w->open( 'ram:SpecifiedTradeAllowanceCharge' );
			$w->open( 'ram:ChargeIndicator' );
			$w->leaf( 'udt:Indicator', $a['charge'] ? 'true' : 'false' );
			$w->close();
			$w->leaf( 'ram:ActualAmount', self::money( $doc, $a['amount'] ) );
			$w->leaf_opt( 'ram:ReasonCode', $a['reason_code'] );
			$w->leaf_opt( 'ram:Reason', $a['reason'] );
			$w->open( 'ram:CategoryTradeTax' );
			$w->leaf( 'ram:TypeCode', 'VAT' );
			$w->leaf( 'ram:CategoryCode', $a['category'] );
			if ( 'O' !== $a['category'] ) {
				$w->leaf( 'ram:RateApplicablePercent', self::trimmed( $a['rate'] ) );
			}
			$w->close()->close();
		}
		$mandate = null === $m ? null : $m['mandate'];
		if ( null !== $doc['due_date'] || null !== $doc['payment_terms'] || null !== $mandate ) {
			$w->open( 'ram:SpecifiedTradePaymentTerms' );
			$w->leaf_opt( 'ram:Description', $doc['payment_terms'] );
			if ( null !== $doc['due_date'] ) {
				$w->open( 'ram:DueDateDateTime' );
				$w->leaf( 'udt:DateTimeString', $date102( $doc['due_date'] ), array( 'format' => '102' ) );
				$w->close();
			}
			$w->leaf_opt( 'ram:DirectDebitMandateID', $mandate );
			$w->close();
		}
		$t = $doc['totals'];
		$w->open( 'ram:SpecifiedTradeSettlementHeaderMonetarySummation' );
		$w->leaf( 'ram:LineTotalAmount', self::money( $doc, $t['lines'] ) );
		list( $has_allowances, $has_charges ) = self::has_allowance_charges( $doc );
		if ( $has_charges ) {
			$w->leaf( 'ram:ChargeTotalAmount', self::money( $doc, $t['charges'] ) );
		}
		if ( $has_allowances ) {
			$w->leaf( 'ram:AllowanceTotalAmount', self::money( $doc, $t['allowances'] ) );
		}
		$w->leaf( 'ram:TaxBasisTotalAmount', self::money( $doc, $t['without_vat'] ) );
		$w->leaf( 'ram:TaxTotalAmount', self::money( $doc, $t['vat'] ), array( 'currencyID' => $doc['currency'] ) );
		$accounting = self::accounting_vat( $doc );
		if ( null !== $accounting ) {
			$w->leaf( 'ram:TaxTotalAmount', $accounting[1], array( 'currencyID' => $accounting[0] ) );
		}
		if ( null !== $t['rounding'] ) {
			$w->leaf( 'ram:RoundingAmount', self::money( $doc, $t['rounding'] ) );
		}
		$w->leaf( 'ram:GrandTotalAmount', self::money( $doc, $t['with_vat'] ) );
		$w->leaf( 'ram:TotalPrepaidAmount', self::money( $doc, $t['paid'] ) );
		$w->leaf( 'ram:DuePayableAmount', self::money( $doc, $t['due'] ) );
		$w->close();
		if ( $doc['credit'] ) {
			$w->open( 'ram:InvoiceReferencedDocument' );
			$w->leaf( 'ram:IssuerAssignedID', $doc['preceding'] );
			if ( null !== $doc['preceding_date'] ) {
				$w->open( 'ram:FormattedIssueDateTime' );
				$w->leaf( 'qdt:DateTimeString', $date102( $doc['preceding_date'] ), array( 'format' => '102' ) );
				$w->close();
			}
			$w->close();
		}
		$w->close()->close();
		return $w->finish();
	}

	private static function cii_party( Counterfoil_Xml_Writer $w, $role, array $p ) {
		$w->open( $role );
		$w->leaf( 'ram:Name', (string) self::opt( $p, 'name' ) );
		$legal = self::ptext( $p, 'legal_id' );
		if ( null !== $legal ) {
			$legal_scheme = self::ptext( $p, 'legal_id_scheme' );
			$w->open( 'ram:SpecifiedLegalOrganization' );
			$w->leaf( 'ram:ID', $legal, null === $legal_scheme ? array() : array( 'schemeID' => $legal_scheme ) );
			$w->close();
		}
		$email = self::ptext( $p, 'email' );
		if ( null !== $email ) {
			$w->open( 'ram:DefinedTradeContact' )->open( 'ram:EmailURIUniversalCommunication' );
			$w->leaf( 'ram:URIID', $email );
			$w->close()->close();
		}
		$w->open( 'ram:PostalTradeAddress' );
		$w->leaf_opt( 'ram:PostcodeCode', self::opt( $p, 'postcode' ) );
		$w->leaf_opt( 'ram:LineOne', self::opt( $p, 'street' ) );
		$w->leaf_opt( 'ram:CityName', self::opt( $p, 'city' ) );
		$w->leaf( 'ram:CountryID', (string) self::opt( $p, 'country' ) );
		$w->close();
		$address = self::ptext( $p, 'electronic_address' );
		$scheme  = self::ptext( $p, 'electronic_address_scheme' );
		if ( null !== $address && null !== $scheme ) {
			$w->open( 'ram:URIUniversalCommunication' );
			$w->leaf( 'ram:URIID', $address, array( 'schemeID' => $scheme ) );
			$w->close();
		}
		foreach ( array(
			'vat_id'              => 'VA',
			'tax_registration_id' => 'FC',
		) as $key => $scheme_id ) {
			$id = self::ptext( $p, $key );
			if ( null !== $id ) {
				$w->open( 'ram:SpecifiedTaxRegistration' );
				$w->leaf( 'ram:ID', $id, array( 'schemeID' => $scheme_id ) );
				$w->close();
			}
		}
		$w->close();
	}
}
